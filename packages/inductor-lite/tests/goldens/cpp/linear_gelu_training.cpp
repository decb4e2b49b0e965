# ======== forward ========
static void kernel0_impl(const float* __restrict__ p_extern0_out0, float* __restrict__ p_buf1, int* __restrict__ err) {
  for (int64_t x0 = 0; x0 < 4; ++x0) {
  for (int64_t x1 = 0; x1 < 64; ++x1) {
  #pragma omp simd
  for (int64_t x2 = 0; x2 < 32; ++x2) {
  const float t1 = p_extern0_out0[(x2 + (32 * x1) + (2048 * x0))];
  const float t2 = fj_gelu_erf(t1);
  p_buf1[(x2 + (32 * x1) + (2048 * x0))] = t2;
  }
  }
  }
}
extern "C" int kernel0(uintptr_t a0, uintptr_t a1) {
  int err = 0;
  kernel0_impl(reinterpret_cast<const float*>(a0), reinterpret_cast<float*>(a1), &err);
  return err;
}
# ======== backward ========
static void kernel0_impl(const float* __restrict__ p_arg4, float* __restrict__ p_buf2, int* __restrict__ err) {
  int fj_nt = 1;
  #ifdef _OPENMP
  #endif
  fj_vec<double> tot1_v(static_cast<int64_t>(fj_nt) * 16, 0.0); double* __restrict__ tot1 = tot1_v.data();
  #pragma omp parallel num_threads(fj_nt)
  {
  int fj_t = 0;
  #ifdef _OPENMP
  fj_t = omp_get_thread_num();
  #endif
  fj_vec<float> part2_v(16, 0); float* __restrict__ part2 = part2_v.data();
  int64_t fj_rows = 0;
  #pragma omp for collapse(1) schedule(static)
  for (int64_t x0 = 0; x0 < 256; ++x0) {
  #pragma omp simd
  for (int64_t y0 = 0; y0 < 16; ++y0) {
  const float t3 = p_arg4[(y0 + (16 * x0))];
  part2[y0] += t3;
  }
  if (++fj_rows == 256) {
  for (int64_t fj_k = 0; fj_k < 16; ++fj_k) {
  tot1[fj_t * 16 + fj_k] += part2[fj_k]; part2[fj_k] = 0;
  }
  fj_rows = 0;
  }
  }
  for (int64_t fj_k = 0; fj_k < 16; ++fj_k) {
  tot1[fj_t * 16 + fj_k] += part2[fj_k]; part2[fj_k] = 0;
  }
  }
  for (int64_t y0 = 0; y0 < 16; ++y0) {
  double acc4 = 0;
  for (int fj_u = 0; fj_u < fj_nt; ++fj_u) acc4 += tot1[fj_u * 16 + y0];
  const float t5 = static_cast<float>(acc4);
  p_buf2[y0] = t5;
  }
}
extern "C" int kernel0(uintptr_t a0, uintptr_t a1) {
  int err = 0;
  kernel0_impl(reinterpret_cast<const float*>(a0), reinterpret_cast<float*>(a1), &err);
  return err;
}

static void kernel1_impl(float* __restrict__ p_buf3, const float* __restrict__ p_arg1, float* __restrict__ p_buf5, int* __restrict__ err) {
  int fj_nt = 1;
  #ifdef _OPENMP
  #endif
  fj_vec<double> tot1_v(static_cast<int64_t>(fj_nt) * 32, 0.0); double* __restrict__ tot1 = tot1_v.data();
  #pragma omp parallel num_threads(fj_nt)
  {
  int fj_t = 0;
  #ifdef _OPENMP
  fj_t = omp_get_thread_num();
  #endif
  fj_vec<float> part2_v(32, 0); float* __restrict__ part2 = part2_v.data();
  int64_t fj_rows = 0;
  #pragma omp for collapse(2) schedule(static)
  for (int64_t x0 = 0; x0 < 4; ++x0) {
  for (int64_t x1 = 0; x1 < 64; ++x1) {
  #pragma omp simd
  for (int64_t y0 = 0; y0 < 32; ++y0) {
  const float t3 = p_buf3[(y0 + (32 * x1) + (2048 * x0))];
  const float t4 = p_arg1[(y0 + (32 * x1) + (2048 * x0))];
  const float t5 = (t4 * static_cast<float>(0x1.6a09e667f3bcdp-1));
  const float t6 = fj_erf(t5);
  const float t7 = (t6 + static_cast<float>(0x1.0000000000000p+0));
  const float t8 = (t7 * static_cast<float>(0x1.0000000000000p-1));
  const float t9 = (t4 * t4);
  const float t10 = (t9 * static_cast<float>(-0x1.0000000000000p-1));
  const float t11 = fj_exp(t10);
  const float t12 = (t11 * static_cast<float>(0x1.9884533d43651p-2));
  const float t13 = (t4 * t12);
  const float t14 = (t8 + t13);
  const float t15 = (t3 * t14);
  p_buf3[(y0 + (32 * x1) + (2048 * x0))] = t15;
  part2[y0] += t15;
  }
  if (++fj_rows == 256) {
  for (int64_t fj_k = 0; fj_k < 32; ++fj_k) {
  tot1[fj_t * 32 + fj_k] += part2[fj_k]; part2[fj_k] = 0;
  }
  fj_rows = 0;
  }
  }
  }
  for (int64_t fj_k = 0; fj_k < 32; ++fj_k) {
  tot1[fj_t * 32 + fj_k] += part2[fj_k]; part2[fj_k] = 0;
  }
  }
  for (int64_t y0 = 0; y0 < 32; ++y0) {
  double acc16 = 0;
  for (int fj_u = 0; fj_u < fj_nt; ++fj_u) acc16 += tot1[fj_u * 32 + y0];
  const float t17 = static_cast<float>(acc16);
  p_buf5[y0] = t17;
  }
}
extern "C" int kernel1(uintptr_t a0, uintptr_t a1, uintptr_t a2) {
  int err = 0;
  kernel1_impl(reinterpret_cast<float*>(a0), reinterpret_cast<const float*>(a1), reinterpret_cast<float*>(a2), &err);
  return err;
}
