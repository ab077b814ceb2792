// Operand lists of the wgmma inline asm: the accumulator registers ("%0" .. "%n-1" in the
// instruction text) and their "+f" / "+r" bindings to an array named d. Shared by the
// int8, 2:4 and dequantizing wgmma GEMMs (sm_90a); each instruction's own text adds the
// A / B / metadata operands after them (%n ...). Only the text is shared: the PTX of
// every kernel is what the written-out lists gave.
#pragma once

#define TQ_WG_D8 "%0, %1, %2, %3, %4, %5, %6, %7"
#define TQ_WG_D16 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15"
#define TQ_WG_D32 \
  TQ_WG_D16 \
  ", %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define TQ_WG_D64 \
  TQ_WG_D32 \
  ", %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define TQ_WG_D128 \
  TQ_WG_D64 \
  ", %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, " \
  "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
  "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"

// "+C"(d[i]) .. "+C"(d[i + 7]) for the constraint letter C ("f" or "r").
#define TQ_WG_ACC8_(C, i) \
  "+" C(d[(i) + 0]), "+" C(d[(i) + 1]), "+" C(d[(i) + 2]), "+" C(d[(i) + 3]), \
  "+" C(d[(i) + 4]), "+" C(d[(i) + 5]), "+" C(d[(i) + 6]), "+" C(d[(i) + 7])
#define TQ_WG_ACC32_(C, i) \
  TQ_WG_ACC8_(C, i), TQ_WG_ACC8_(C, (i) + 8), TQ_WG_ACC8_(C, (i) + 16), TQ_WG_ACC8_(C, (i) + 24)
// d[0] .. d[n - 1].
#define TQ_WG_ACC16(C) TQ_WG_ACC8_(C, 0), TQ_WG_ACC8_(C, 8)
#define TQ_WG_ACC32(C) TQ_WG_ACC32_(C, 0)
#define TQ_WG_ACC64(C) TQ_WG_ACC32_(C, 0), TQ_WG_ACC32_(C, 32)
#define TQ_WG_ACC128(C) TQ_WG_ACC64(C), TQ_WG_ACC32_(C, 64), TQ_WG_ACC32_(C, 96)
