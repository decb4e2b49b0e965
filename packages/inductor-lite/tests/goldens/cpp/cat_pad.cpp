static void kernel0_impl(const float* __restrict__ p_arg1, const float* __restrict__ p_arg0, float* __restrict__ p_buf0, int* __restrict__ err) {
  for (int64_t x0 = 0; x0 < 3; ++x0) {
  #pragma omp simd
  for (int64_t x1 = 0; x1 < 9; ++x1) {
  const int64_t t1 = static_cast<int64_t>((-1 + x1));
  const bool t2 = (t1 >= static_cast<int64_t>(0LL));
  const bool t3 = (t1 < static_cast<int64_t>(6LL));
  const bool t4 = (t2 && t3);
  const float t5 = p_arg1[((2 * x0) + fj_max<int64_t>(0, fj_min<int64_t>(1, (-4 + fj_max<int64_t>(0, fj_min<int64_t>(5, (-1 + x1)))))))];
  const float t6 = p_arg0[((4 * x0) + fj_max<int64_t>(0, fj_min<int64_t>(3, fj_min<int64_t>(5, (-1 + x1)))))];
  const int64_t t7 = static_cast<int64_t>(fj_max<int64_t>(0, fj_min<int64_t>(5, (-1 + x1))));
  const bool t8 = (t7 < static_cast<int64_t>(4LL));
  const float t9 = (t8 ? t6 : t5);
  const float t10 = (t4 ? t9 : static_cast<float>(0x0.0p+0));
  p_buf0[(x1 + (9 * x0))] = t10;
  }
  }
}
extern "C" int kernel0(uintptr_t a0, uintptr_t a1, uintptr_t a2) {
  int err = 0;
  kernel0_impl(reinterpret_cast<const float*>(a0), reinterpret_cast<const float*>(a1), reinterpret_cast<float*>(a2), &err);
  return err;
}
