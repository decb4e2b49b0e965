static void kernel0_impl(const float* __restrict__ p_arg0, const float* __restrict__ p_arg1, float* __restrict__ p_buf1, int* __restrict__ err) {
  for (int64_t x0 = 0; x0 < 5; ++x0) {
  double acc1 = 0;
  {
  float part6 = 0;
  #pragma omp simd reduction(+:part6)
  for (int64_t r0 = 0; r0 < 64; ++r0) {
  const float t4 = p_arg0[(r0 + (64 * x0))];
  const float t5 = (t4 * t4);
  part6 += (t5);
  }
  acc1 += part6;
  }
  const float t8 = static_cast<float>(acc1);
  #pragma omp simd
  for (int64_t y0 = 0; y0 < 64; ++y0) {
  const float t9 = p_arg0[(y0 + (64 * x0))];
  const float t10 = (t8 / static_cast<float>(0x1.0000000000000p+6));
  const float t11 = (t10 + static_cast<float>(0x1.0c6f7a0b5ed8dp-20));
  const float t12 = (1 / fj_sqrt(t11));
  const float t13 = (t9 * t12);
  const float t14 = p_arg1[y0];
  const float t15 = (t13 * t14);
  p_buf1[(y0 + (64 * x0))] = t15;
  }
  }
}
extern "C" int kernel0(uintptr_t a0, uintptr_t a1, uintptr_t a2) {
  int err = 0;
  kernel0_impl(reinterpret_cast<const float*>(a0), reinterpret_cast<const float*>(a1), reinterpret_cast<float*>(a2), &err);
  return err;
}
