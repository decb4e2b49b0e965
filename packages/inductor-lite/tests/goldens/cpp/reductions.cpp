static void kernel0_impl(const float* __restrict__ p_arg0, float* __restrict__ p_buf0, int* __restrict__ err) {
  for (int64_t x0 = 0; x0 < 29; ++x0) {
  double acc1 = 0;
  {
  float part5 = 0;
  #pragma omp simd reduction(+:part5)
  for (int64_t r0 = 0; r0 < 6; ++r0) {
  const float t4 = p_arg0[(x0 + (29 * r0))];
  part5 += (t4);
  }
  acc1 += part5;
  }
  const float t7 = static_cast<float>(acc1);
  p_buf0[x0] = t7;
  }
}
extern "C" int kernel0(uintptr_t a0, uintptr_t a1) {
  int err = 0;
  kernel0_impl(reinterpret_cast<const float*>(a0), reinterpret_cast<float*>(a1), &err);
  return err;
}

static void kernel1_impl(const float* __restrict__ p_arg0, float* __restrict__ p_buf1, int64_t* __restrict__ p_buf2, float* __restrict__ p_buf6, int* __restrict__ err) {
  for (int64_t x0 = 0; x0 < 6; ++x0) {
  float acc1 = -std::numeric_limits<float>::infinity();
  int nan2 = 0;
  #pragma omp simd reduction(max:acc1) reduction(|:nan2)
  for (int64_t r0 = 0; r0 < 29; ++r0) {
  const float t4 = p_arg0[(r0 + (29 * x0))];
  acc1 = t4 > acc1 ? t4 : acc1;
  nan2 |= static_cast<int>(t4 != t4);
  }
  if (nan2) acc1 = std::numeric_limits<float>::quiet_NaN();
  p_buf1[x0] = acc1;
  float acc5 = 0;
  int64_t idx7 = -1;
  for (int64_t r0 = 0; r0 < 29; ++r0) {
  const float t8 = p_arg0[(r0 + (29 * x0))];
  if (idx7 < 0 || fj_arg_better_max<float>(t8, acc5)) { acc5 = t8; idx7 = r0; }
  }
  p_buf2[x0] = idx7;
  double acc9 = 0;
  #pragma omp simd reduction(+:acc9)
  for (int64_t r0 = 0; r0 < 29; ++r0) {
  const float t12 = p_arg0[(r0 + (29 * x0))];
  const double t13 = static_cast<double>(t12);
  acc9 += static_cast<double>(t13);
  }
  double acc14 = 0;
  #pragma omp simd reduction(+:acc14)
  for (int64_t r0 = 0; r0 < 29; ++r0) {
  const float t17 = p_arg0[(r0 + (29 * x0))];
  const double t18 = static_cast<double>(t17);
  const double t19 = (acc9 / static_cast<double>(0x1.d000000000000p+4));
  const double t20 = (t18 - t19);
  const double t21 = (t20 * t20);
  acc14 += static_cast<double>(t21);
  }
  double acc22 = 0;
  #pragma omp simd reduction(+:acc22)
  for (int64_t r0 = 0; r0 < 29; ++r0) {
  const float t25 = p_arg0[(r0 + (29 * x0))];
  const double t26 = static_cast<double>(t25);
  acc22 += static_cast<double>(t26);
  }
  const double t27 = (acc14 / static_cast<double>(0x1.c000000000000p+4));
  const float t28 = static_cast<float>(t27);
  p_buf6[x0] = t28;
  }
}
extern "C" int kernel1(uintptr_t a0, uintptr_t a1, uintptr_t a2, uintptr_t a3) {
  int err = 0;
  kernel1_impl(reinterpret_cast<const float*>(a0), reinterpret_cast<float*>(a1), reinterpret_cast<int64_t*>(a2), reinterpret_cast<float*>(a3), &err);
  return err;
}

static void kernel2_impl(const float* __restrict__ p_arg0, float* __restrict__ p_buf7, int* __restrict__ err) {
  double acc1 = 0;
  for (int64_t r0 = 0; r0 < 6; ++r0) {
  {
  float part5 = 0;
  #pragma omp simd reduction(+:part5)
  for (int64_t r1 = 0; r1 < 29; ++r1) {
  const float t4 = p_arg0[(r1 + (29 * r0))];
  part5 += (t4);
  }
  acc1 += part5;
  }
  }
  const float t7 = static_cast<float>(acc1);
  p_buf7[0] = t7;
}
extern "C" int kernel2(uintptr_t a0, uintptr_t a1) {
  int err = 0;
  kernel2_impl(reinterpret_cast<const float*>(a0), reinterpret_cast<float*>(a1), &err);
  return err;
}

static void kernel3_impl(const float* __restrict__ p_arg0, bool* __restrict__ p_buf8, int* __restrict__ err) {
  for (int64_t x0 = 0; x0 < 6; ++x0) {
  int32_t acc1 = 0;
  #pragma omp simd reduction(|:acc1)
  for (int64_t r0 = 0; r0 < 29; ++r0) {
  const float t4 = p_arg0[(r0 + (29 * x0))];
  const bool t5 = (t4 > static_cast<float>(0x0.0p+0));
  acc1 |= static_cast<int>(t5 != 0);
  }
  p_buf8[x0] = (acc1 != 0);
  }
}
extern "C" int kernel3(uintptr_t a0, uintptr_t a1) {
  int err = 0;
  kernel3_impl(reinterpret_cast<const float*>(a0), reinterpret_cast<bool*>(a1), &err);
  return err;
}
