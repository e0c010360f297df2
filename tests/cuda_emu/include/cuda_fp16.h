#pragma once
#include "cuda_runtime.h"
struct alignas(2) __half { uint16_t bits; };
struct alignas(4) __half2 { __half x, y; };
inline float __half2float(__half h) {
  const uint32_t sign = uint32_t(h.bits & 0x8000u) << 16;
  uint32_t exp = (h.bits >> 10) & 0x1Fu, mant = h.bits & 0x3FFu, bits;
  if (exp == 0x1F) bits = sign | 0x7F800000u | (mant << 13);
  else if (exp == 0) {
    if (mant == 0) bits = sign;
    else { int e = -1; do { ++e; mant <<= 1; } while ((mant & 0x400u) == 0);
           bits = sign | (uint32_t(127 - 15 - e) << 23) | ((mant & 0x3FFu) << 13); }
  } else bits = sign | ((exp + 112u) << 23) | (mant << 13);
  return __uint_as_float(bits);
}
inline float2 __half22float2(__half2 h) { return {__half2float(h.x), __half2float(h.y)}; }
inline __half __ushort_as_half(unsigned short b) { return __half{b}; }
