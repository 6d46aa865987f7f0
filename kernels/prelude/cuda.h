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
