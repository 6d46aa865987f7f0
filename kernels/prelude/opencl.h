/* Prelude for the OpenCL C dialect; see prelude/cuda.h for the CUDA side. */
#define KERNEL __kernel void
#define GLOBAL __global
#define RESTRICT restrict
#define SHARED __local
#define GID0 ((uint)get_global_id(0))
#define GID1 ((uint)get_global_id(1))
#define GID2 ((uint)get_global_id(2))
#define LID0 ((uint)get_local_id(0))
#define LSIZE0 ((uint)get_local_size(0))
#define GSIZE0 ((uint)get_global_size(0))
#define GROUP0 ((uint)get_group_id(0))
#define BARRIER() barrier(CLK_LOCAL_MEM_FENCE)
#define FENCE_GLOBAL() mem_fence(CLK_GLOBAL_MEM_FENCE)
#define FMA(a, b, c) fma((a), (b), (c))
#define ATOMIC_ADD_U32(p, v) atomic_add((p), (v))
#define ATOMIC_MAX_U32(p, v) atomic_max((p), (v))
#define FABS(x) fabs(x)
#define FMAX(a, b) fmax((a), (b))
#define FLOAT_BITS(x) as_uint(x)
#define DEVICE_FN
/* Double precision where the device has it (BabelStream's default precision). */
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
/* A global address as an integer, and one load of the 64-bit word it names (see
 * prelude/cuda.h). */
#define GLOBAL_ADDRESS(p) ((ulong)(p))
#define LOAD_GLOBAL_ADDRESS(a) (*(__global ulong*)(a))
/* A streaming kernel's load (prelude/cuda.h reads it through the L2 alone); a plain load here. */
#define LOAD_VIA_L2(p) (*(p))
/* One executor's read of its contiguous block [first, end) of a, added to total: four float8
 * accumulators over vector loads, since PoCL keeps a sum in scalar chains scalar (a CPU core's
 * two adders then bound the read at 33 GB/s from its L1, where its copy streams 270). Only
 * CPUs stream blocks; prelude/cuda.h has a scalar twin that no GPU runs. */
#define READ_BLOCK(a, first, end, total)                                                  \
    {                                                                                   \
        float8 r0_ = (float8)(0.0f), r1_ = r0_, r2_ = r0_, r3_ = r0_;                   \
        uint i_ = (first);                                                              \
        for (; i_ + 32u <= (end); i_ += 32u) {                                          \
            r0_ += vload8(0, (a) + i_);                                                 \
            r1_ += vload8(0, (a) + i_ + 8u);                                            \
            r2_ += vload8(0, (a) + i_ + 16u);                                           \
            r3_ += vload8(0, (a) + i_ + 24u);                                           \
        }                                                                               \
        float8 r_ = (r0_ + r1_) + (r2_ + r3_);                                          \
        float s_ = ((r_.s0 + r_.s1) + (r_.s2 + r_.s3)) + ((r_.s4 + r_.s5) + (r_.s6 + r_.s7)); \
        for (; i_ < (end); ++i_) s_ += (a)[i_];                                         \
        total += s_;                                                                    \
    }
