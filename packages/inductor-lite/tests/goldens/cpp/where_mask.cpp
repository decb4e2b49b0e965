static void kernel0_impl(const float* __restrict__ p_arg0, const float* __restrict__ p_arg1, float* __restrict__ p_buf0, int* __restrict__ err) {
  for (int64_t x0 = 0; x0 < 23; ++x0) {
  const float t1 = p_arg0[x0];
  const bool t2 = (t1 < static_cast<float>(-0x1.0000000000000p+0));
  const float t3 = p_arg1[x0];
  const bool t4 = (t1 > t3);
  const float t5 = (t3 * static_cast<float>(0x1.0000000000000p-1));
  const float t6 = (t4 ? t1 : t5);
  const float t7 = (t2 ? static_cast<float>(0x0.0p+0) : t6);
  p_buf0[x0] = t7;
  }
}
extern "C" int kernel0(uintptr_t a0, uintptr_t a1, uintptr_t a2) {
  int err = 0;
  kernel0_impl(reinterpret_cast<const float*>(a0), reinterpret_cast<const float*>(a1), reinterpret_cast<float*>(a2), &err);
  return err;
}
