static void kernel0_impl(const float* __restrict__ p_arg0, float* __restrict__ p_buf0, int* __restrict__ err) {
  for (int64_t x0 = 0; x0 < 6; ++x0) {
  #pragma omp simd
  for (int64_t x1 = 0; x1 < 13; ++x1) {
  const float t1 = p_arg0[(x0 + (6 * x1))];
  const float t2 = fj_exp(t1);
  const float t3 = (t2 + static_cast<float>(0x1.0000000000000p+0));
  p_buf0[(x0 + (6 * x1))] = t3;
  }
  }
}
extern "C" int kernel0(uintptr_t a0, uintptr_t a1) {
  int err = 0;
  kernel0_impl(reinterpret_cast<const float*>(a0), reinterpret_cast<float*>(a1), &err);
  return err;
}
