static void kernel0_impl(const float* __restrict__ p_arg0, float* __restrict__ p_buf0, float* __restrict__ p_buf1, int* __restrict__ err) {
  for (int64_t x0 = 0; x0 < 7; ++x0) {
  float acc1 = -std::numeric_limits<float>::infinity();
  int nan2 = 0;
  #pragma omp simd reduction(max:acc1) reduction(|:nan2)
  for (int64_t r0 = 0; r0 < 11; ++r0) {
  const float t4 = p_arg0[(r0 + (11 * x0))];
  acc1 = t4 > acc1 ? t4 : acc1;
  nan2 |= static_cast<int>(t4 != t4);
  }
  if (nan2) acc1 = std::numeric_limits<float>::quiet_NaN();
  p_buf0[x0] = acc1;
  double acc5 = 0;
  {
  float part11 = 0;
  #pragma omp simd reduction(+:part11)
  for (int64_t r0 = 0; r0 < 11; ++r0) {
  const float t8 = p_arg0[(r0 + (11 * x0))];
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

static void kernel1_impl(const int64_t* __restrict__ p_arg1, const float* __restrict__ p_arg0, const float* __restrict__ p_buf0, const float* __restrict__ p_buf1, float* __restrict__ p_buf4, int* __restrict__ err) {
  int64_t acc1 = 0;
  #pragma omp simd reduction(+:acc1)
  for (int64_t r0 = 0; r0 < 7; ++r0) {
  const int64_t t4 = p_arg1[r0];
  const bool t5 = (t4 != static_cast<int64_t>(-100LL));
  const int64_t t6 = static_cast<int64_t>(t5);
  acc1 += static_cast<int64_t>(t6);
  }
  double acc7 = 0;
  {
  float part22 = 0;
  #pragma omp simd reduction(+:part22)
  for (int64_t r0 = 0; r0 < 7; ++r0) {
  const int64_t t10 = p_arg1[r0];
  const bool t11 = (t10 != static_cast<int64_t>(-100LL));
  const int64_t t12 = (t11 ? t10 : static_cast<int64_t>(0LL));
  int64_t ind13 = static_cast<int64_t>(t12);
  if (__builtin_expect(ind13 < 0 || ind13 >= 11, 0)) { fj_flag(err); ind13 = 0; }
  const float t14 = p_arg0[(ind13 + (11 * r0))];
  const float t15 = p_buf0[r0];
  const float t16 = (t14 - t15);
  const float t17 = p_buf1[r0];
  const float t18 = fj_log(t17);
  const float t19 = (t16 - t18);
  const float t20 = (-t19);
  const float t21 = (t11 ? t20 : static_cast<float>(0x0.0p+0));
  part22 += (t21);
  }
  acc7 += part22;
  }
  const float t24 = static_cast<float>(acc7);
  const float t25 = static_cast<float>(acc1);
  const float t26 = (t24 / t25);
  p_buf4[0] = t26;
}
extern "C" int kernel1(uintptr_t a0, uintptr_t a1, uintptr_t a2, uintptr_t a3, uintptr_t a4) {
  int err = 0;
  kernel1_impl(reinterpret_cast<const int64_t*>(a0), reinterpret_cast<const float*>(a1), reinterpret_cast<const float*>(a2), reinterpret_cast<const float*>(a3), reinterpret_cast<float*>(a4), &err);
  return err;
}
