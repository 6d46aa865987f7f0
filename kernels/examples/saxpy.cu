// saxpy in plain CUDA C: y = a * x + y. `extern "C"` keeps the kernel's name as written; without
// it the name is C++-mangled and the spec's `kernel = "saxpy"` would not find it.
extern "C" __global__ void saxpy(const float* x, float* y, float a, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
