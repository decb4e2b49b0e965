# ======== forward ========
static void kernel0_impl(const float* __restrict__ p_arg0, const float* __restrict__ p_arg1, const float* __restrict__ p_arg2, float* __restrict__ p_buf0, int* __restrict__ err) {
  for (int64_t x0 = 0; x0 < 256; ++x0) {
  #pragma omp simd
  for (int64_t x1 = 0; x1 < 16; ++x1) {
  const float t1 = p_arg0[(x1 + (16 * x0))];
  const float t2 = p_arg1[x1];
  const float t3 = (t1 * t2);
  const float t4 = p_arg2[x1];
  const float t5 = (t3 + t4);
  const float t6 = fj_gelu_erf(t5);
  const float t7 = (t6 * t1);
  p_buf0[(x1 + (16 * x0))] = t7;
  }
  }
}
extern "C" int kernel0(uintptr_t a0, uintptr_t a1, uintptr_t a2, uintptr_t a3) {
  int err = 0;
  kernel0_impl(reinterpret_cast<const float*>(a0), reinterpret_cast<const float*>(a1), reinterpret_cast<const float*>(a2), reinterpret_cast<float*>(a3), &err);
  return err;
}
# ======== backward ========
static void kernel0_impl(const float* __restrict__ p_arg3, const float* __restrict__ p_arg0, const float* __restrict__ p_arg1, const float* __restrict__ p_arg2, float* __restrict__ p_buf1, float* __restrict__ p_buf2, int* __restrict__ err) {
  int fj_nt = 1;
  #ifdef _OPENMP
  #endif
  fj_vec<double> tot1_v(static_cast<int64_t>(fj_nt) * 16, 0.0); double* __restrict__ tot1 = tot1_v.data();
  fj_vec<double> tot3_v(static_cast<int64_t>(fj_nt) * 16, 0.0); double* __restrict__ tot3 = tot3_v.data();
  #pragma omp parallel num_threads(fj_nt)
  {
  int fj_t = 0;
  #ifdef _OPENMP
  fj_t = omp_get_thread_num();
  #endif
  fj_vec<float> part2_v(16, 0); float* __restrict__ part2 = part2_v.data();
  fj_vec<float> part4_v(16, 0); float* __restrict__ part4 = part4_v.data();
  int64_t fj_rows = 0;
  #pragma omp for collapse(1) schedule(static)
  for (int64_t x0 = 0; x0 < 256; ++x0) {
  #pragma omp simd
  for (int64_t y0 = 0; y0 < 16; ++y0) {
  const float t5 = p_arg3[(y0 + (16 * x0))];
  const float t6 = p_arg0[(y0 + (16 * x0))];
  const float t7 = (t5 * t6);
  const float t8 = p_arg1[y0];
  const float t9 = (t6 * t8);
  const float t10 = p_arg2[y0];
  const float t11 = (t9 + t10);
  const float t12 = (t11 * static_cast<float>(0x1.6a09e667f3bcdp-1));
  const float t13 = fj_erf(t12);
  const float t14 = (t13 + static_cast<float>(0x1.0000000000000p+0));
  const float t15 = (t14 * static_cast<float>(0x1.0000000000000p-1));
  const float t16 = (t11 * t11);
  const float t17 = (t16 * static_cast<float>(-0x1.0000000000000p-1));
  const float t18 = fj_exp(t17);
  const float t19 = (t18 * static_cast<float>(0x1.9884533d43651p-2));
  const float t20 = (t11 * t19);
  const float t21 = (t15 + t20);
  const float t22 = (t7 * t21);
  part2[y0] += t22;
  const float t23 = (t22 * t6);
  part4[y0] += t23;
  }
  if (++fj_rows == 256) {
  for (int64_t fj_k = 0; fj_k < 16; ++fj_k) {
  tot1[fj_t * 16 + fj_k] += part2[fj_k]; part2[fj_k] = 0;
  tot3[fj_t * 16 + fj_k] += part4[fj_k]; part4[fj_k] = 0;
  }
  fj_rows = 0;
  }
  }
  for (int64_t fj_k = 0; fj_k < 16; ++fj_k) {
  tot1[fj_t * 16 + fj_k] += part2[fj_k]; part2[fj_k] = 0;
  tot3[fj_t * 16 + fj_k] += part4[fj_k]; part4[fj_k] = 0;
  }
  }
  for (int64_t y0 = 0; y0 < 16; ++y0) {
  double acc24 = 0;
  for (int fj_u = 0; fj_u < fj_nt; ++fj_u) acc24 += tot1[fj_u * 16 + y0];
  const float t25 = static_cast<float>(acc24);
  p_buf1[y0] = t25;
  double acc26 = 0;
  for (int fj_u = 0; fj_u < fj_nt; ++fj_u) acc26 += tot3[fj_u * 16 + y0];
  const float t27 = static_cast<float>(acc26);
  p_buf2[y0] = t27;
  }
}
extern "C" int kernel0(uintptr_t a0, uintptr_t a1, uintptr_t a2, uintptr_t a3, uintptr_t a4, uintptr_t a5) {
  int err = 0;
  kernel0_impl(reinterpret_cast<const float*>(a0), reinterpret_cast<const float*>(a1), reinterpret_cast<const float*>(a2), reinterpret_cast<const float*>(a3), reinterpret_cast<float*>(a4), reinterpret_cast<float*>(a5), &err);
  return err;
}
