// NVFP4 weight layouts: the formats.md packing (layout 0) and the decode orders of the GEMVs
// for bf16 (layout 1) and fp16 (layout 2).
//
// Layout 0 (formats.md): uint8 [N, K/2], code 2j in the low nibble of byte j. Read as a
// little-endian 32-bit word, code n_j (j = 0..7) sits at bits 4j..4j+3 (bit 4j = m, 4j+1 = e0,
// 4j+2 = e1, 4j+3 = sign).
//
// Layout 1 permutes the 32 bits of every word (bytes 4i..4i+3 of a row; K % 16 == 0 keeps
// words inside rows), nothing else: same shape, same scales, same bytes per weight. It exists
// for the bf16 decode of the GEMV, which builds four bf16 pairs h_p = (n_p, n_{p+4}) per word
// with magnitude bits (e1 e0 m) at 8..6 / 24..22 and the sign at 15 / 31 (P = 0x81C081C0;
// e2m1 * 2^-126 exactly, docs/nvfp4_gemv.md 2). From layout 0 that takes 9 integer-ALU ops and
// 4 IMADs per word (decode_e2m1_bf16). In layout 1 each pair's 8 bits already lie where one
// cheap op moves them onto P:
//   h0 = w & P                                  (the bits sit on P)
//   h1 = rotl(w, 10) & P                        (one funnel shift)
//   h2 = rotl(w, 13) & P
//   h3 = ((w & 0x001B001B) * 0x1084) & P        (copies shifted by 2, 7 and 12; disjoint, so the
//                                                product is their OR: no carries)
// 7 ALU ops and 1 IMAD per word. The four preimages of P partition the word; the search over
// every mover of this kind (benchmarks/micro/nvfp4_layout_search.py) finds no partition with
// fewer ALU ops for bf16 (no four translates of P tile the word, so at least one pair needs a
// masked multiply). Every consumer decodes to the same pairs as from layout 0, so x's
// permutation and everything after the decode are unchanged, and the results are the same bits.
//
// Layout 2 does the same for the fp16 decode (decode_e2m1_f16's pairs h0 = (n0, n2),
// h1 = (n4, n6), h2 = (n1, n3), h3 = (n5, n7); magnitude at 9..11 / 25..27, sign at 15 / 31,
// P16 = 0x8E008E00; e2m1 * 2^-14 exactly), where layout 0 costs 8 ALU ops + 3 IMAD per word:
//   h0 = w & P16;   h1 = (w << 3) & P16;
//   h2 = ((w & 0x40074007) * 0x202) & P16;   h3 = ((w & 0x20382038) * 0x44) & P16
// 6 ALU ops + 3 IMAD (the shift on the FMA pipe); the search's only layout under 7 ALU ops.
#pragma once

#include <stdint.h>

#if defined(__CUDACC__)
#define TQ_NVFP4_HD __host__ __device__
#else
#define TQ_NVFP4_HD
#endif

namespace torchquant {
namespace nvfp4 {

constexpr int kLayoutStd = 0;   // formats.md
constexpr int kLayoutBf16 = 1;  // the bf16 decode order (above)
constexpr int kLayoutF16 = 2;   // the fp16 decode order (above)
constexpr int kLayoutBf16Adj = 3;  // layout 1's decode on adjacent codes (below)
constexpr int kNumLayouts = 4;  // the word layouts 0..3
// Layout 4 (nvfp4_gemv's paths 'direct' and 'mma' only): layout 3's words, with the weight and its scales
// stored per 16-row tile and 64-byte piece (nvfp4_tiles.h; docs/nvfp4_gemv.md 40-41). Not a word
// layout: nvfp4_relayout(w, 4) is relayout 3 followed by the tiling, nvfp4_relayout_scale the
// scales' tiling.
constexpr int kLayoutTiled = 4;
constexpr int kTileRows = 16;         // weight rows per tile
constexpr int kTilePieceBytes = 64;   // packed weight bytes of a row per piece (128 codes)
constexpr int kTilePieceScales = 8;   // scale bytes of a row per piece

constexpr uint32_t kBf16PairMask = 0x81C081C0u;   // P: magnitude 6..8 / 22..24, sign 15 / 31
constexpr uint32_t kL1MulMask = 0x001B001Bu;      // bits 0, 1, 3, 4, 16, 17, 19, 20 (pair h3)
constexpr uint32_t kL1Mul = 0x1084u;              // 2^2 + 2^7 + 2^12
constexpr uint32_t kF16PairMask = 0x8E008E00u;    // P16: magnitude 9..11 / 25..27, sign 15 / 31
constexpr uint32_t kL2MaskA = 0x40074007u;        // bits 0..2, 14, 16..18, 30 (pair h2)
constexpr uint32_t kL2MulA = 0x0202u;             // 2^1 + 2^9
constexpr uint32_t kL2MaskB = 0x20382038u;        // bits 3..5, 13, 19..21, 29 (pair h3)
constexpr uint32_t kL2MulB = 0x0044u;             // 2^2 + 2^6

// Bit of the decoded pair word h_p that field f (0 m, 1 e0, 2 e1, 3 sign) of a code in half
// `hi` lands on; the magnitude starts at bit `mag` (6 for bf16, 9 for fp16).
TQ_NVFP4_HD constexpr int pair_bit(int f, int hi, int mag) { return (f == 3 ? 15 : mag + f) + 16 * hi; }

// Layout-1 bit that holds layout-0 bit b (code j = b / 4, field b % 4), i.e. the preimage of
// its target bit under pair j % 4's mover.
TQ_NVFP4_HD constexpr int l1_bit_of(int b) {
  const int j = b >> 2, f = b & 3, p = j & 3, q = pair_bit(f, j >> 2, 6);
  if (p == 0) return q;
  if (p == 1) return (q + 22) & 31;  // rotl 10: q - 10 mod 32
  if (p == 2) return (q + 19) & 31;  // rotl 13
  // p == 3: q comes from q - 2 (q = 6, 22), q - 7 (7, 8, 23, 24) or q - 12 (15, 31)
  const int lo = q & 15;
  return lo == 6 ? q - 2 : lo == 15 ? q - 12 : q - 7;
}

// Layout-2 bit that holds layout-0 bit b: code j's pair p = 2 (j & 1) + j / 4, half (j / 2) & 1
// (h0 = (n0, n2), h1 = (n4, n6), h2 = (n1, n3), h3 = (n5, n7)), then the pair's mover.
TQ_NVFP4_HD constexpr int l2_bit_of(int b) {
  const int j = b >> 2, f = b & 3, p = 2 * (j & 1) + (j >> 2), q = pair_bit(f, (j >> 1) & 1, 9);
  const bool sign = (q & 15) == 15;
  if (p == 0) return q;
  if (p == 1) return q - 3;           // << 3
  if (p == 2) return q - (sign ? 1 : 9);  // * (2^1 + 2^9)
  return q - (sign ? 2 : 6);          // * (2^2 + 2^6)
}

// Layout-3 bit that holds layout-0 bit b. Layout 3 is layout 1 for a word whose codes stand in
// the order (c0, c2, c4, c6, c1, c3, c5, c7): code j sits where layout 1 keeps code
// j' = j / 2 + 4 (j % 2), so layout 1's decode (decode_e2m1_bf16_l1, the same 7 ALU ops + 1 IMAD)
// yields h_p = (code 2p, code 2p + 1), adjacent codes, and x's natural pairs are the mma's B
// fragments as loaded (the direct GEMV, docs/nvfp4_gemv.md 27-28).
TQ_NVFP4_HD constexpr int l3_bit_of(int b) {
  const int j = b >> 2;
  return l1_bit_of(4 * ((j >> 1) + 4 * (j & 1)) + (b & 3));
}

TQ_NVFP4_HD constexpr int layout_bit_of(int layout, int b) {
  return layout == kLayoutBf16      ? l1_bit_of(b)
         : layout == kLayoutF16     ? l2_bit_of(b)
         : layout == kLayoutBf16Adj ? l3_bit_of(b)
                                    : b;
}

// Layout 0 -> `layout` and back, one word (a loop over bits: used by the relayout kernel,
// which is memory-bound; the CPU uses tables built from the same map).
TQ_NVFP4_HD inline uint32_t word_to_layout(uint32_t w, int layout) {
  uint32_t r = 0;
  for (int b = 0; b < 32; ++b) r |= ((w >> b) & 1u) << layout_bit_of(layout, b);
  return r;
}
TQ_NVFP4_HD inline uint32_t word_from_layout(uint32_t w, int layout) {
  uint32_t r = 0;
  for (int b = 0; b < 32; ++b) r |= ((w >> layout_bit_of(layout, b)) & 1u) << b;
  return r;
}

}  // namespace nvfp4
}  // namespace torchquant
