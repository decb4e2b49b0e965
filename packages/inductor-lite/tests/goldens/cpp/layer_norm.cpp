static void kernel0_impl(const float* __restrict__ p_arg0, const float* __restrict__ p_arg1, const float* __restrict__ p_arg2, float* __restrict__ p_buf2, int* __restrict__ err) {
  for (int64_t x0 = 0; x0 < 4; ++x0) {
  for (int64_t x1 = 0; x1 < 3; ++x1) {
  double acc1 = 0;
  {
  float part5 = 0;
  #pragma omp simd reduction(+:part5)
  for (int64_t r0 = 0; r0 < 31; ++r0) {
  const float t4 = p_arg0[(r0 + (31 * x1) + (93 * x0))];
  part5 += (t4);
  }
  acc1 += part5;
  }
  const float t7 = static_cast<float>(acc1);
  double acc8 = 0;
  {
  float part15 = 0;
  #pragma omp simd reduction(+:part15)
  for (int64_t r0 = 0; r0 < 31; ++r0) {
  const float t11 = p_arg0[(r0 + (31 * x1) + (93 * x0))];
  const float t12 = (t7 / static_cast<float>(0x1.f000000000000p+4));
  const float t13 = (t11 - t12);
  const float t14 = (t13 * t13);
  part15 += (t14);
  }
  acc8 += part15;
  }
  const float t17 = static_cast<float>(acc8);
  #pragma omp simd
  for (int64_t y0 = 0; y0 < 31; ++y0) {
  const float t18 = p_arg0[(y0 + (31 * x1) + (93 * x0))];
  const float t19 = (t7 / static_cast<float>(0x1.f000000000000p+4));
  const float t20 = (t17 / static_cast<float>(0x1.f000000000000p+4));
  const float t21 = (t20 + static_cast<float>(0x1.4f8b588e368f1p-17));
  const float t22 = (1 / fj_sqrt(t21));
  const float t23 = p_arg1[y0];
  const float t24 = p_arg2[y0];
  const float t25 = (t18 - t19);
  const float t26 = (t25 * t22);
  const float t27 = (t26 * t23);
  const float t28 = (t27 + t24);
  p_buf2[(y0 + (31 * x1) + (93 * x0))] = t28;
  }
  }
  }
}
extern "C" int kernel0(uintptr_t a0, uintptr_t a1, uintptr_t a2, uintptr_t a3) {
  int err = 0;
  kernel0_impl(reinterpret_cast<const float*>(a0), reinterpret_cast<const float*>(a1), reinterpret_cast<const float*>(a2), reinterpret_cast<float*>(a3), &err);
  return err;
}
