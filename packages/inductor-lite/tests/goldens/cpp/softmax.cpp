static void kernel0_impl(const float* __restrict__ p_arg0, float* __restrict__ p_buf3, int* __restrict__ err) {
  for (int64_t x0 = 0; x0 < 6; ++x0) {
  alignas(64) float l_buf1[33];
  float acc1 = -std::numeric_limits<float>::infinity();
  int nan2 = 0;
  #pragma omp simd reduction(max:acc1) reduction(|:nan2)
  for (int64_t r0 = 0; r0 < 33; ++r0) {
  const float t4 = p_arg0[(r0 + (33 * x0))];
  acc1 = t4 > acc1 ? t4 : acc1;
  nan2 |= static_cast<int>(t4 != t4);
  }
  if (nan2) acc1 = std::numeric_limits<float>::quiet_NaN();
  #pragma omp simd
  for (int64_t y0 = 0; y0 < 33; ++y0) {
  const float t5 = p_arg0[(y0 + (33 * x0))];
  const float t6 = (t5 - acc1);
  const float t7 = fj_exp(t6);
  l_buf1[y0] = t7;
  }
  double acc8 = 0;
  {
  float part12 = 0;
  #pragma omp simd reduction(+:part12)
  for (int64_t r0 = 0; r0 < 33; ++r0) {
  const float t11 = l_buf1[r0];
  part12 += (t11);
  }
  acc8 += part12;
  }
  const float t14 = static_cast<float>(acc8);
  #pragma omp simd
  for (int64_t y0 = 0; y0 < 33; ++y0) {
  const float t15 = l_buf1[y0];
  const float t16 = (1 / t14);
  const float t17 = (t15 * t16);
  p_buf3[(y0 + (33 * x0))] = t17;
  }
  }
}
extern "C" int kernel0(uintptr_t a0, uintptr_t a1) {
  int err = 0;
  kernel0_impl(reinterpret_cast<const float*>(a0), reinterpret_cast<float*>(a1), &err);
  return err;
}
