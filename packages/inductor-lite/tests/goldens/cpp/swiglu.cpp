static void kernel0_impl(const float* __restrict__ p_arg0, const float* __restrict__ p_arg1, float* __restrict__ p_buf0, int* __restrict__ err) {
  for (int64_t x0 = 0; x0 < 4; ++x0) {
  #pragma omp simd
  for (int64_t x1 = 0; x1 < 24; ++x1) {
  const float t1 = p_arg0[(x1 + (24 * x0))];
  const float t2 = fj_sigmoid(t1);
  const float t3 = (t1 * t2);
  const float t4 = p_arg1[(x1 + (24 * x0))];
  const float t5 = (t3 * t4);
  p_buf0[(x1 + (24 * x0))] = t5;
  }
  }
}
extern "C" int kernel0(uintptr_t a0, uintptr_t a1, uintptr_t a2) {
  int err = 0;
  kernel0_impl(reinterpret_cast<const float*>(a0), reinterpret_cast<const float*>(a1), reinterpret_cast<float*>(a2), &err);
  return err;
}
