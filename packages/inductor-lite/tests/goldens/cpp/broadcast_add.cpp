static void kernel0_impl(const float* __restrict__ p_arg0, const float* __restrict__ p_arg1, float* __restrict__ p_buf0, int* __restrict__ err) {
  for (int64_t x0 = 0; x0 < 5; ++x0) {
  for (int64_t x1 = 0; x1 < 7; ++x1) {
  #pragma omp simd
  for (int64_t x2 = 0; x2 < 11; ++x2) {
  const float t1 = p_arg0[(x2 + (11 * x1) + (77 * x0))];
  const float t2 = p_arg1[x2];
  const float t3 = (t1 + t2);
  const float t4 = fj_tanh(t3);
  const float t5 = (t4 - t2);
  p_buf0[(x2 + (11 * x1) + (77 * x0))] = t5;
  }
  }
  }
}
extern "C" int kernel0(uintptr_t a0, uintptr_t a1, uintptr_t a2) {
  int err = 0;
  kernel0_impl(reinterpret_cast<const float*>(a0), reinterpret_cast<const float*>(a1), reinterpret_cast<float*>(a2), &err);
  return err;
}
