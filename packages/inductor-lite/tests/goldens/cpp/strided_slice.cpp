static void kernel0_impl(const float* __restrict__ p_arg0, float* __restrict__ p_buf0, int* __restrict__ err) {
  for (int64_t x0 = 0; x0 < 7; ++x0) {
  #pragma omp simd
  for (int64_t x1 = 0; x1 < 5; ++x1) {
  const float t1 = p_arg0[((2 * x1) + (10 * x0))];
  const float t2 = p_arg0[(1 + (2 * x1) + (10 * x0))];
  const float t3 = (t1 * t2);
  p_buf0[(x1 + (5 * x0))] = t3;
  }
  }
}
extern "C" int kernel0(uintptr_t a0, uintptr_t a1) {
  int err = 0;
  kernel0_impl(reinterpret_cast<const float*>(a0), reinterpret_cast<float*>(a1), &err);
  return err;
}
