static void kernel0_impl(const int64_t* __restrict__ p_arg0, const int64_t* __restrict__ p_arg1, int64_t* __restrict__ p_buf0, int64_t* __restrict__ p_buf1, float* __restrict__ p_buf2, int* __restrict__ err) {
  for (int64_t x0 = 0; x0 < 3; ++x0) {
  #pragma omp simd
  for (int64_t x1 = 0; x1 < 5; ++x1) {
  const int64_t t1 = p_arg0[(x1 + (5 * x0))];
  const int64_t t2 = (t1 * static_cast<int64_t>(3LL));
  const int64_t t3 = p_arg1[(x1 + (5 * x0))];
  const int64_t t4 = (t2 + t3);
  const int64_t t5 = (t4 & static_cast<int64_t>(7LL));
  p_buf0[(x1 + (5 * x0))] = t5;
  const int64_t t6 = fj_maximum(t1, t3);
  p_buf1[(x1 + (5 * x0))] = t6;
  const float t7 = static_cast<float>(t1);
  const float t8 = (t7 / static_cast<float>(0x1.0000000000000p+1));
  p_buf2[(x1 + (5 * x0))] = t8;
  }
  }
}
extern "C" int kernel0(uintptr_t a0, uintptr_t a1, uintptr_t a2, uintptr_t a3, uintptr_t a4) {
  int err = 0;
  kernel0_impl(reinterpret_cast<const int64_t*>(a0), reinterpret_cast<const int64_t*>(a1), reinterpret_cast<int64_t*>(a2), reinterpret_cast<int64_t*>(a3), reinterpret_cast<float*>(a4), &err);
  return err;
}
