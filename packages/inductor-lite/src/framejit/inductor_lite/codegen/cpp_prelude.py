"""The header every generated C++ file starts with: dtype helpers, nan-exact math helpers,
and SIMD declarations of libm functions so loops over exp/tanh/... vectorize via libmvec.

It includes only light headers: <cmath>, <algorithm> and <vector> cost more compile time
than a typical graph's kernels (most of a cold compile).  The math functions are the
compiler's builtins under `fj_` names, one overload per float type (what <cmath>'s
std:: overloads call), and a generic one through double for integers; `fj_min`/`fj_max`
and a growable `fj_vec` replace <algorithm> and <vector>.
"""

from __future__ import annotations

# fj_<name>(x) for every libm function the generator spells (codegen/cpp.py's tables)
UNARY_MATH = [
    "exp",
    "exp2",
    "expm1",
    "log",
    "log2",
    "log10",
    "log1p",
    "sqrt",
    "sin",
    "cos",
    "tan",
    "tanh",
    "sinh",
    "cosh",
    "asin",
    "acos",
    "atan",
    "asinh",
    "acosh",
    "atanh",
    "erf",
    "erfc",
    "floor",
    "ceil",
    "nearbyint",
    "trunc",
]
BINARY_MATH = ["atan2", "fmod", "pow"]


def _math_overloads() -> str:
    lines = []
    for name in UNARY_MATH:
        lines.append(
            f"static inline float fj_{name}(float x) {{ return __builtin_{name}f(x); }}\n"
            f"static inline double fj_{name}(double x) {{ return __builtin_{name}(x); }}\n"
            f"template <class T> static inline T fj_{name}(T x) "
            f"{{ return static_cast<T>(__builtin_{name}(static_cast<double>(x))); }}"
        )
    for name in BINARY_MATH:
        lines.append(
            f"static inline float fj_{name}(float a, float b) {{ return __builtin_{name}f(a, b); }}\n"
            f"static inline double fj_{name}(double a, double b) {{ return __builtin_{name}(a, b); }}\n"
            f"template <class T> static inline T fj_{name}(T a, T b) {{ return static_cast<T>("
            f"__builtin_{name}(static_cast<double>(a), static_cast<double>(b))); }}"
        )
    return "\n".join(lines)


PRELUDE = (
    r"""
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <type_traits>
#ifdef _OPENMP
#include <omp.h>
#endif

#if FJ_HAVE_MVEC
#define FJ_SIMD __attribute__((simd("notinbranch")))
extern "C" {
float expf(float) noexcept FJ_SIMD; double exp(double) noexcept FJ_SIMD;
float exp2f(float) noexcept FJ_SIMD; double exp2(double) noexcept FJ_SIMD;
float expm1f(float) noexcept FJ_SIMD; double expm1(double) noexcept FJ_SIMD;
float logf(float) noexcept FJ_SIMD; double log(double) noexcept FJ_SIMD;
float log2f(float) noexcept FJ_SIMD; double log2(double) noexcept FJ_SIMD;
float log10f(float) noexcept FJ_SIMD; double log10(double) noexcept FJ_SIMD;
float log1pf(float) noexcept FJ_SIMD; double log1p(double) noexcept FJ_SIMD;
float sinf(float) noexcept FJ_SIMD; double sin(double) noexcept FJ_SIMD;
float cosf(float) noexcept FJ_SIMD; double cos(double) noexcept FJ_SIMD;
float tanf(float) noexcept FJ_SIMD; double tan(double) noexcept FJ_SIMD;
float tanhf(float) noexcept FJ_SIMD; double tanh(double) noexcept FJ_SIMD;
float sinhf(float) noexcept FJ_SIMD; double sinh(double) noexcept FJ_SIMD;
float coshf(float) noexcept FJ_SIMD; double cosh(double) noexcept FJ_SIMD;
float asinf(float) noexcept FJ_SIMD; double asin(double) noexcept FJ_SIMD;
float acosf(float) noexcept FJ_SIMD; double acos(double) noexcept FJ_SIMD;
float atanf(float) noexcept FJ_SIMD; double atan(double) noexcept FJ_SIMD;
float asinhf(float) noexcept FJ_SIMD; double asinh(double) noexcept FJ_SIMD;
float acoshf(float) noexcept FJ_SIMD; double acosh(double) noexcept FJ_SIMD;
float atanhf(float) noexcept FJ_SIMD; double atanh(double) noexcept FJ_SIMD;
float erff(float) noexcept FJ_SIMD; double erf(double) noexcept FJ_SIMD;
float erfcf(float) noexcept FJ_SIMD; double erfc(double) noexcept FJ_SIMD;
float powf(float, float) noexcept FJ_SIMD; double pow(double, double) noexcept FJ_SIMD;
float atan2f(float, float) noexcept FJ_SIMD; double atan2(double, double) noexcept FJ_SIMD;
}
#endif

"""
    + _math_overloads()
    + r"""
static inline float fj_abs(float x) { return __builtin_fabsf(x); }
static inline double fj_abs(double x) { return __builtin_fabs(x); }
template <class T> static inline T fj_abs(T x) { return x < T(0) ? static_cast<T>(-x) : x; }
template <class T> static inline T fj_min(T a, T b) { return b < a ? b : a; }
template <class T> static inline T fj_max(T a, T b) { return a < b ? b : a; }

// a growable per-thread array (std::vector without <vector>)
template <class T> struct fj_vec {
  T* ptr = nullptr;
  int64_t count = 0;
  fj_vec() = default;
  explicit fj_vec(int64_t n, T value = T(0)) { resize(n); for (int64_t i = 0; i < n; ++i) ptr[i] = value; }
  fj_vec(const fj_vec&) = delete;
  fj_vec& operator=(const fj_vec&) = delete;
  ~fj_vec() { std::free(ptr); }
  void resize(int64_t n) {
    if (n <= count) return;
    void* grown = std::realloc(ptr, static_cast<size_t>(n) * sizeof(T));
    if (grown == nullptr) std::abort();
    ptr = static_cast<T*>(grown);
    count = n;
  }
  int64_t size() const { return count; }
  T* data() { return ptr; }
  T& operator[](int64_t i) { return ptr[i]; }
};

static inline float fj_bf16_to_float(uint16_t h) {
  return __builtin_bit_cast(float, static_cast<uint32_t>(h) << 16);
}
static inline uint16_t fj_float_to_bf16(float f) {
  uint32_t bits = __builtin_bit_cast(uint32_t, f);
  if (f != f) return 0x7FC0;
  uint32_t bias = ((bits >> 16) & 1u) + 0x7FFFu;
  return static_cast<uint16_t>((bits + bias) >> 16);
}
static inline float fj_round_bf16(float f) { return fj_bf16_to_float(fj_float_to_bf16(f)); }
static inline float fj_half_to_float(uint16_t h) {
  return static_cast<float>(__builtin_bit_cast(_Float16, h));
}
static inline uint16_t fj_float_to_half(float f) {
  return __builtin_bit_cast(uint16_t, static_cast<_Float16>(f));
}
static inline float fj_round_half(float f) { return fj_half_to_float(fj_float_to_half(f)); }

// eager's float -> integer conversion on x86 (cvtt*2si): NaN and out-of-range values give
// the minimum; types under 32 bits go through int32 and wrap.  A bare static_cast is
// undefined there, and GCC folds (double)(int64_t)x into trunc(x) (inf stays inf).
template <class T, class F> static inline T fj_float_to_int(F x) {
  if constexpr (sizeof(T) == 8) {
    const bool in_range = x >= F(-9223372036854775808.0) && x < F(9223372036854775808.0);
    return in_range ? static_cast<T>(x) : static_cast<T>(-9223372036854775807LL - 1);
  } else {
    const bool in_range = x >= F(-2147483648.0) && x < F(2147483648.0);
    return static_cast<T>(in_range ? static_cast<int32_t>(x) : static_cast<int32_t>(-2147483647 - 1));
  }
}
template <class T> static inline T fj_sigmoid(T x) { return T(1) / (T(1) + fj_exp(-x)); }
template <class T> static inline T fj_silu(T x) { return x / (T(1) + fj_exp(-x)); }
template <class T> static inline T fj_relu(T x) { return x < T(0) ? T(0) : x; }
template <class T> static inline T fj_gelu_erf(T x) {
  return T(0.5) * x * (T(1) + fj_erf(x * T(0.70710678118654752440)));
}
template <class T> static inline T fj_gelu_tanh(T x) {
  const T beta = T(1.41421356237309504880 * 1.12837916709551257390 * 0.5);
  const T inner = beta * (x + T(0.044715) * x * x * x);
  return T(0.5) * x * (T(1) + fj_tanh(inner));
}
template <class T> static inline T fj_maximum(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (a != a || b != b) return std::numeric_limits<T>::quiet_NaN();
  }
  return a < b ? b : a;
}
template <class T> static inline T fj_minimum(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (a != a || b != b) return std::numeric_limits<T>::quiet_NaN();
  }
  return b < a ? b : a;
}
template <class T> static inline T fj_clamp_min(T x, T lo) {
  if constexpr (std::is_floating_point_v<T>) {
    if (x != x) return x;
  }
  return x < lo ? lo : x;
}
template <class T> static inline T fj_clamp_max(T x, T hi) {
  if constexpr (std::is_floating_point_v<T>) {
    if (x != x) return x;
  }
  return hi < x ? hi : x;
}
template <class T> static inline T fj_remainder(T a, T b) {
  T m = fj_fmod(a, b);
  if (m != T(0) && ((b < T(0)) != (m < T(0)))) m += b;
  return m;
}
template <class T> static inline bool fj_isinf(T x) {
  return fj_abs(x) == std::numeric_limits<T>::infinity();
}
template <class T> static inline bool fj_arg_better_max(T v, T best) {
  if constexpr (std::is_floating_point_v<T>) {
    if (best != best) return false;
    if (v != v) return true;
  }
  return v > best;
}
template <class T> static inline bool fj_arg_better_min(T v, T best) {
  if constexpr (std::is_floating_point_v<T>) {
    if (best != best) return false;
    if (v != v) return true;
  }
  return v < best;
}
static inline void fj_flag(int* err) { __atomic_store_n(err, 1, __ATOMIC_RELAXED); }
"""
)
