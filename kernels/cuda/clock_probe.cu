/* CUDA only: the SM clock while a kernel runs. One thread spins on dependent arithmetic and
 * reads the cycle counter (clock64) and the nanosecond global timer at both ends; cycles per
 * nanosecond is the clock actually running, which drops below the nominal one under load. */
KERNEL clock_probe(GLOBAL ulong* out, uint spins) {
    if (GID0 != 0) return;
    ulong t0, t1;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    long long c0 = clock64();
    float x = 1.0f;
    for (uint i = 0; i < spins; ++i) x = x * 1.0000001f + 1e-7f;
    long long c1 = clock64();
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
    out[0] = (ulong)(c1 - c0);
    out[1] = t1 - t0;
    out[2] = (ulong)__float_as_uint(x);
}
