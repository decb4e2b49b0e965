static void kernel0_impl(const float* __restrict__ p_arg0, float* __restrict__ p_buf0, float* __restrict__ p_buf1, int* __restrict__ err) {
  for (int64_t x0 = 0; x0 < 5; ++x0) {
  float acc1 = -std::numeric_limits<float>::infinity();
  int nan2 = 0;
  #pragma omp simd reduction(max:acc1) reduction(|:nan2)
  for (int64_t r0 = 0; r0 < 9; ++r0) {
  const float t4 = p_arg0[(x0 + (5 * r0))];
  acc1 = t4 > acc1 ? t4 : acc1;
  nan2 |= static_cast<int>(t4 != t4);
  }
  if (nan2) acc1 = std::numeric_limits<float>::quiet_NaN();
  p_buf0[x0] = acc1;
  double acc5 = 0;
  {
  float part11 = 0;
  #pragma omp simd reduction(+:part11)
  for (int64_t r0 = 0; r0 < 9; ++r0) {
  const float t8 = p_arg0[(x0 + (5 * r0))];
  const float t9 = (t8 - acc1);
  const float t10 = fj_exp(t9);
  part11 += (t10);
  }
  acc5 += part11;
  }
  const float t13 = static_cast<float>(acc5);
  p_buf1[x0] = t13;
  }
}
extern "C" int kernel0(uintptr_t a0, uintptr_t a1, uintptr_t a2) {
  int err = 0;
  kernel0_impl(reinterpret_cast<const float*>(a0), reinterpret_cast<float*>(a1), reinterpret_cast<float*>(a2), &err);
  return err;
}

static void kernel1_impl(const float* __restrict__ p_arg0, const float* __restrict__ p_buf0, const float* __restrict__ p_buf1, float* __restrict__ p_buf2, int* __restrict__ err) {
  for (int64_t x0 = 0; x0 < 9; ++x0) {
  #pragma omp simd
  for (int64_t x1 = 0; x1 < 5; ++x1) {
  const float t1 = p_arg0[(x1 + (5 * x0))];
  const float t2 = p_buf0[x1];
  const float t3 = (t1 - t2);
  const float t4 = p_buf1[x1];
  const float t5 = fj_log(t4);
  const float t6 = (t3 - t5);
  p_buf2[(x1 + (5 * x0))] = t6;
  }
  }
}
extern "C" int kernel1(uintptr_t a0, uintptr_t a1, uintptr_t a2, uintptr_t a3) {
  int err = 0;
  kernel1_impl(reinterpret_cast<const float*>(a0), reinterpret_cast<const float*>(a1), reinterpret_cast<const float*>(a2), reinterpret_cast<float*>(a3), &err);
  return err;
}
