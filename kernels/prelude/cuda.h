/* Prelude for the CUDA dialect (compiled by NVRTC). Kernels in kernels/ are written once
 * against these macros; prelude/opencl.h maps the same names to OpenCL C. */
typedef unsigned int uint;
typedef unsigned long long ulong;
#define KERNEL extern "C" __global__ void
#define GLOBAL
#define RESTRICT __restrict__
#define SHARED __shared__
#define GID0 (blockIdx.x * blockDim.x + threadIdx.x)
#define GID1 (blockIdx.y * blockDim.y + threadIdx.y)
#define GID2 (blockIdx.z * blockDim.z + threadIdx.z)
#define LID0 (threadIdx.x)
#define LSIZE0 (blockDim.x)
#define GSIZE0 (gridDim.x * blockDim.x)
#define GROUP0 (blockIdx.x)
#define BARRIER() __syncthreads()
#define FENCE_GLOBAL() __threadfence()
#define FMA(a, b, c) fmaf((a), (b), (c))
#define ATOMIC_ADD_U32(p, v) atomicAdd((p), (v))
#define ATOMIC_MAX_U32(p, v) atomicMax((p), (v))
#define FABS(x) fabsf(x)
#define FMAX(a, b) fmaxf((a), (b))
#define FLOAT_BITS(x) __float_as_uint(x)
#define DEVICE_FN __device__
/* A global address as an integer, and one load of the 64-bit word it names: `ld.global`, the
 * ordinary coherent load (a pointer loaded from memory would otherwise be read with a
 * generic `ld`, and a const restrict one through the read-only path). The read-latency chase
 * on a GPU is a chain of these. */
#define GLOBAL_ADDRESS(p) ((ulong)__cvta_generic_to_global(p))
__device__ __forceinline__ ulong load_global_address(ulong a) {
    ulong v;
    asm volatile("ld.global.u64 %0, [%1];" : "=l"(v) : "l"(a) : "memory");
    return v;
}
#define LOAD_GLOBAL_ADDRESS(a) load_global_address(a)
/* One float of a streaming kernel, loaded through the L2 alone (`ld.global.cg`): a kernel
 * launched again cannot count on finding its data in the L1 of the multiprocessor its block
 * lands on, so the bandwidth sweep must not either (passes after the first would otherwise
 * read each multiprocessor's share from its L1, up to about 25 MiB of working set on an H100). */
#define LOAD_VIA_L2(p) __ldcg(p)
/* One executor's read of its contiguous block [first, end) of a, added to total (see
 * prelude/opencl.h): only CPUs stream blocks, so no GPU runs this scalar twin. */
#define READ_BLOCK(a, first, end, total)                                                  \
    {                                                                                   \
        float s_ = 0.0f;                                                                \
        for (uint i_ = (first); i_ < (end); ++i_) s_ += LOAD_VIA_L2(&(a)[i_]);          \
        total += s_;                                                                    \
    }
