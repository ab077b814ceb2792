// CPU kernels for the 2:4 structured-sparsity ops: prune24, compress24 and
// decompress24. Groups are 4 consecutive elements along K (the last dim of
// [N, K]); K is a multiple of 4; int8, fp16, bf16 and fp32.
//
// prune24: keeps the two largest |w| of every group; at equal magnitude the
// lower index wins (element i is kept iff fewer than two others beat it,
// where j beats i when |w_j| > |w_i|, or |w_j| == |w_i| and j < i). Returns
// (pruned: kept values, zeros elsewhere; mask: bool). NaN/Inf are rejected.
//
// compress24 -> (values [N, K/2] in w's dtype, meta uint8 [N, ceil(K/8)]):
// group g of row n stores its two kept values at values[n, 2g], [n, 2g+1] and
// the nibble pos0 | pos1 << 2 (pos0 < pos1) in byte g / 2 of the row, the low
// nibble for even g, the high one for odd g; when K/4 is odd, the last byte's
// high nibble is 0. Kept positions: the nonzero ones; a group with fewer than
// two nonzeros fills up with its lowest zero positions (canonical: the same
// dense tensor always gives the same bytes). "Nonzero" is by value, so -0.0
// counts as zero: a -0.0 at a dropped position decompresses as +0.0 (equal as
// values, not as bits). A group with 3 or 4 nonzeros raises, naming the first
// such row and group in row-major order (the same one whatever the thread
// count).
//
// decompress24: the inverse; every group's nibble must have pos0 < pos1
// (otherwise it raises, naming the first bad row and group). The unused high
// nibble of the last byte (K/4 odd) is not read.
//
// All three run rows in parallel (at::parallel_for over N); each element is
// copied bit for bit, so compress -> decompress reproduces the input values
// exactly.
#include <torch/library.h>

#include <atomic>
#include <cmath>
#include <limits>

#include "common/checks.h"
#include "cpu/cpu_common.h"

TQ_NO_FP_CONTRACT

namespace torchquant {
namespace cpu {
namespace {

inline int64_t row_grain(int64_t K) { return std::max<int64_t>(1, 16384 / K); }

// Magnitude for ranking; exact in fp32 for every supported dtype.
template <typename T>
inline float magnitude(T v) {
  return std::fabs(static_cast<float>(v));
}

template <typename T>
inline bool is_nonzero(T v) {
  return static_cast<float>(v) != 0.0f;
}

// Calls f(T{}) with T the C++ type of a 2:4 dtype.
template <typename F>
void dispatch_sparse24(at::ScalarType t, const char* op, F&& f) {
  switch (t) {
    case at::kChar: f(int8_t{}); break;
    case at::kHalf: f(c10::Half{}); break;
    case at::kBFloat16: f(c10::BFloat16{}); break;
    case at::kFloat: f(float{}); break;
    default: TORCH_CHECK(false, op, ": unsupported dtype ", t);
  }
}

// Records the lowest failing linear index across threads (atomic min), so the
// error names the same group whatever the thread count and chunking.
inline void record_first(std::atomic<int64_t>& first, int64_t idx) {
  int64_t cur = first.load(std::memory_order_relaxed);
  while (idx < cur && !first.compare_exchange_weak(cur, idx, std::memory_order_relaxed)) {
  }
}

// --------------------------------------------------------------- prune24 --
template <typename T>
void prune24_impl(const T* w, int64_t N, int64_t K, T* out, bool* mask) {
  at::parallel_for(0, N, row_grain(K), [&](int64_t b, int64_t e) {
    for (int64_t n = b; n < e; ++n) {
      for (int64_t g = 0; g < K / 4; ++g) {
        const T* v = w + n * K + 4 * g;
        float a[4];
        for (int i = 0; i < 4; ++i) a[i] = magnitude(v[i]);
        for (int i = 0; i < 4; ++i) {
          int beaten_by = 0;
          for (int j = 0; j < 4; ++j)
            beaten_by += int(j != i && (a[j] > a[i] || (a[j] == a[i] && j < i)));
          const bool keep = beaten_by < 2;
          out[n * K + 4 * g + i] = keep ? v[i] : static_cast<T>(0);
          mask[n * K + 4 * g + i] = keep;
        }
      }
    }
  });
}

std::tuple<at::Tensor, at::Tensor> prune24_cpu(const at::Tensor& w) {
  const char* op = "prune24";
  validate_sparse24_input(w, op);
  check_finite(w, op, "w");
  const int64_t N = w.size(0), K = w.size(1);
  at::Tensor pruned = at::empty_like(w);
  at::Tensor mask = at::empty({N, K}, w.options().dtype(at::kBool));
  dispatch_sparse24(w.scalar_type(), op, [&](auto tag) {
    using T = decltype(tag);
    prune24_impl<T>(w.data_ptr<T>(), N, K, pruned.data_ptr<T>(), mask.data_ptr<bool>());
  });
  return {pruned, mask};
}

// ------------------------------------------------------------ compress24 --
template <typename T>
void compress24_impl(const T* w, int64_t N, int64_t K, T* values, uint8_t* meta,
                     std::atomic<int64_t>& first_bad) {
  const int64_t G = K / 4, MB = ceil_div(K, 8);
  at::parallel_for(0, N, row_grain(K), [&](int64_t b, int64_t e) {
    for (int64_t n = b; n < e; ++n) {
      uint8_t* mrow = meta + n * MB;
      std::fill(mrow, mrow + MB, uint8_t(0));
      for (int64_t g = 0; g < G; ++g) {
        const T* v = w + n * K + 4 * g;
        int nz[4], cnt = 0;
        for (int i = 0; i < 4; ++i)
          if (is_nonzero(v[i])) nz[cnt++] = i;
        if (cnt > 2) {
          record_first(first_bad, n * G + g);
          return;  // this chunk's later groups cannot come first
        }
        int p0, p1;
        if (cnt == 2) {
          p0 = nz[0];
          p1 = nz[1];
        } else if (cnt == 1) {
          const int z = nz[0] == 0 ? 1 : 0;  // lowest zero position
          p0 = std::min(nz[0], z);
          p1 = std::max(nz[0], z);
        } else {
          p0 = 0;
          p1 = 1;
        }
        values[n * (K / 2) + 2 * g] = v[p0];
        values[n * (K / 2) + 2 * g + 1] = v[p1];
        const uint8_t nib = static_cast<uint8_t>(p0 | (p1 << 2));
        mrow[g / 2] |= static_cast<uint8_t>((g % 2) ? (nib << 4) : nib);
      }
    }
  });
}

std::tuple<at::Tensor, at::Tensor> compress24_cpu(const at::Tensor& w) {
  const char* op = "compress24";
  validate_sparse24_input(w, op);
  const int64_t N = w.size(0), K = w.size(1), G = K / 4;
  at::Tensor values = at::empty({N, K / 2}, w.options());
  at::Tensor meta = at::empty({N, ceil_div(K, 8)}, w.options().dtype(at::kByte));
  std::atomic<int64_t> first_bad{std::numeric_limits<int64_t>::max()};
  dispatch_sparse24(w.scalar_type(), op, [&](auto tag) {
    using T = decltype(tag);
    compress24_impl<T>(w.data_ptr<T>(), N, K, values.data_ptr<T>(), meta.data_ptr<uint8_t>(),
                       first_bad);
  });
  const int64_t bad = first_bad.load();
  if (bad != std::numeric_limits<int64_t>::max()) {
    const int64_t n = bad / G, g = bad % G;
    int cnt = 0;
    dispatch_sparse24(w.scalar_type(), op, [&](auto tag) {
      using T = decltype(tag);
      const T* v = w.data_ptr<T>() + n * K + 4 * g;
      for (int i = 0; i < 4; ++i) cnt += int(is_nonzero(v[i]));
    });
    TORCH_CHECK(false, op, ": row ", n, ", group ", g, " (columns ", 4 * g, "..", 4 * g + 3,
                ") has ", cnt,
                " nonzeros; a 2:4 tensor has at most 2 in every group of 4 along K "
                "(prune it with prune24 first)");
  }
  return {values, meta};
}

// ---------------------------------------------------------- decompress24 --
template <typename T>
void decompress24_impl(const T* values, const uint8_t* meta, int64_t N, int64_t K, T* out,
                       std::atomic<int64_t>& first_bad) {
  const int64_t G = K / 4, MB = ceil_div(K, 8);
  at::parallel_for(0, N, row_grain(K), [&](int64_t b, int64_t e) {
    for (int64_t n = b; n < e; ++n) {
      T* o = out + n * K;
      std::fill(o, o + K, static_cast<T>(0));
      for (int64_t g = 0; g < G; ++g) {
        const uint8_t byte = meta[n * MB + g / 2];
        const int nib = (g % 2) ? (byte >> 4) : (byte & 0xF);
        const int p0 = nib & 3, p1 = nib >> 2;
        if (p0 >= p1) {
          record_first(first_bad, n * G + g);
          return;
        }
        o[4 * g + p0] = values[n * (K / 2) + 2 * g];
        o[4 * g + p1] = values[n * (K / 2) + 2 * g + 1];
      }
    }
  });
}

at::Tensor decompress24_cpu(const at::Tensor& values, const at::Tensor& meta) {
  const char* op = "decompress24";
  const int64_t K = validate_decompress24(values, meta);
  const int64_t N = values.size(0), G = K / 4;
  at::Tensor out = at::empty({N, K}, values.options());
  if (out.numel() == 0) return out;
  std::atomic<int64_t> first_bad{std::numeric_limits<int64_t>::max()};
  dispatch_sparse24(values.scalar_type(), op, [&](auto tag) {
    using T = decltype(tag);
    decompress24_impl<T>(values.data_ptr<T>(), meta.data_ptr<uint8_t>(), N, K,
                         out.data_ptr<T>(), first_bad);
  });
  const int64_t bad = first_bad.load();
  if (bad != std::numeric_limits<int64_t>::max()) {
    const int64_t n = bad / G, g = bad % G;
    const uint8_t byte = meta.data_ptr<uint8_t>()[n * ceil_div(K, 8) + g / 2];
    const int nib = (g % 2) ? (byte >> 4) : (byte & 0xF);
    TORCH_CHECK(false, op, ": meta of row ", n, ", group ", g, " is nibble ", nib,
                " (positions ", (nib & 3), " and ", (nib >> 2),
                "); a valid nibble has first position < second (corrupt or non-compress24 meta)");
  }
  return out;
}

}  // namespace
}  // namespace cpu
}  // namespace torchquant

TORCH_LIBRARY_IMPL(torchquant, CPU, m) {
  m.impl("prune24", &torchquant::cpu::prune24_cpu);
  m.impl("compress24", &torchquant::cpu::compress24_cpu);
  m.impl("decompress24", &torchquant::cpu::decompress24_cpu);
}
