#!/usr/bin/env bash
# 2026-12-04i call 7 (same warm machine as call 6, its nvfp4-only build kept): racecheck of the
# x-resident kernel on fewer launches than nvfp4_xres_memcheck.py (which ran past call 6's 40 s):
# KS 1 / 8, K split 1 / 3, 257x4160, M = 1 / 4, TORCHQUANT_NVFP4_F16 1 / -1, and F16=1 with 1e5
# in x (the vote fails, the block restages bf16). The exact command of that call:
PYTHONPATH=. timeout 45 compute-sanitizer --tool racecheck --racecheck-report hazard --print-limit 20 python3 -c "
import os,torch,torchquant
from torchquant import ops
torch.manual_seed(0); os.environ['TORCHQUANT_NVFP4_XRES']='1'
for ks in ('1','8'):
  os.environ['TORCHQUANT_NVFP4_KS']=ks
  for sp in ('1','3'):
    os.environ['TORCHQUANT_NVFP4_SPLITK']=sp
    N,K=257,4160
    w=torch.randn(N,K,device='cuda')*0.05; wp,s,g=ops.quantize_nvfp4(w)
    for M in (1,4):
      x=torch.randn(M,K,device='cuda',dtype=torch.bfloat16)
      for f in ('1','-1'):
        os.environ['TORCHQUANT_NVFP4_F16']=f; ops.nvfp4_gemv(x,wp,s,g,None,'mma')
      x[M-1,K//2]=1e5; os.environ['TORCHQUANT_NVFP4_F16']='1'; ops.nvfp4_gemv(x,wp,s,g,None,'mma')
torch.cuda.synchronize(); print('xres racecheck launches done')
" 2>&1 | tail -n 3
# Output (call 7):
# ========= COMPUTE-SANITIZER
# xres racecheck launches done
# ========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)
