// A wavefront over an n×n grid in plain OpenCL C: anti-diagonal d = k + 1 (k = 1..2n−3)
// updates a[i][j] = a[i−1][j] + a[i][j−1] for i + j = d, 1 ≤ i, j ≤ n − 1, so each
// launch depends on the one before — a kernel launched in a host loop.
__kernel void diagonal(__global float* a, uint n, uint k) {
    uint t = get_global_id(0);
    uint d = k + 1u;
    uint i_lo = d > n - 1u ? d - (n - 1u) : 1u;
    uint i = i_lo + t;
    if (i >= n || i >= d) return;
    uint j = d - i;
    if (j < 1u || j >= n) return;
    a[i * n + j] = a[(i - 1u) * n + j] + a[i * n + j - 1u];
}
