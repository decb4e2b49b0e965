static void kernel0_impl(const int64_t* __restrict__ p_arg1, const float* __restrict__ p_arg0, float* __restrict__ p_buf0, int* __restrict__ err) {
  for (int64_t x0 = 0; x0 < 2; ++x0) {
  for (int64_t x1 = 0; x1 < 3; ++x1) {
  #pragma omp simd
  for (int64_t x2 = 0; x2 < 8; ++x2) {
  const int64_t t1 = p_arg1[(x1 + (3 * x0))];
  int64_t ind2 = static_cast<int64_t>(t1);
  if (__builtin_expect(ind2 < 0 || ind2 >= 10, 0)) { fj_flag(err); ind2 = 0; }
  const float t3 = p_arg0[(x2 + (8 * ind2))];
  const float t4 = (t3 * static_cast<float>(0x1.0000000000000p+1));
  p_buf0[(x2 + (8 * x1) + (24 * x0))] = t4;
  }
  }
  }
}
extern "C" int kernel0(uintptr_t a0, uintptr_t a1, uintptr_t a2) {
  int err = 0;
  kernel0_impl(reinterpret_cast<const int64_t*>(a0), reinterpret_cast<const float*>(a1), reinterpret_cast<float*>(a2), &err);
  return err;
}
