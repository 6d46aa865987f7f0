//! The source reader's tests: walks, locals, gathers and text it must survive.

use super::*;

fn p(i: usize) -> Sym {
    Sym::Param(i)
}

#[test]
fn a_gemm_walks_a_column_of_each_operand() {
    let src = "/* C = A·Bᵀ */\nKERNEL sgemm_nt(GLOBAL const float* RESTRICT a, GLOBAL const float* RESTRICT b,\n GLOBAL float* RESTRICT c, uint m_rows, uint n_cols, uint k, float alpha, float beta)\n{\n uint m = GID0, n = GID1;\n if (m >= m_rows || n >= n_cols) return;\n float sum = 0.0f;\n for (uint i = 0; i < k; i++) sum += a[m + i * m_rows] * b[n + i * n_cols];\n c[m + n * m_rows] = beta * c[m + n * m_rows] + alpha * sum;\n}\n";
    let walks = source_walks(src, "sgemm_nt");
    assert_eq!(walks.len(), 2, "{walks:?}");
    assert_eq!((walks[0].param, &walks[0].stride), (0, &p(3)));
    assert_eq!((walks[1].param, &walks[1].stride), (1, &p(4)));
    assert_eq!(walks[0].steps, Some(p(5)));
    assert!(
        walks[0].excerpt.contains("a[m + i * m_rows]"),
        "{}",
        walks[0].excerpt
    );
    // c is written once per work item, outside the loop: no walk.
    assert!(walks.iter().all(|w| w.param != 2));
    // Another kernel's name, or none by that name: nothing.
    assert!(source_walks(src, "sgemm").is_empty());
}

#[test]
fn a_grid_stride_loop_walks_the_launch_s_width() {
    for inc in [
        "i += GSIZE0",
        "i += get_global_size(0)",
        "i += blockDim.x * gridDim.x",
    ] {
        let src = format!(
            "KERNEL saxpy(GLOBAL const float* x, GLOBAL float* y, float a, uint n) {{\n  for (uint i = GID0; i < n; {inc}) {{ y[i] = a * x[i] + y[i]; }}\n}}"
        );
        let walks = source_walks(&src, "saxpy");
        assert_eq!(walks.len(), 2, "{inc}: {walks:?}");
        for w in &walks {
            assert_eq!(w.stride, Sym::Global(0), "{inc}");
            let per = Sym::bin(Sym::Div, p(3), Sym::Global(0));
            assert_eq!(w.steps, Some(Sym::Floor(Box::new(per))), "{inc}");
        }
    }
}

#[test]
fn nested_products_comments_defines_and_enclosing_loops() {
    let src = "#define NZ 8\n// for (k = 0; k < 9; k++) a[k * nx] is a comment\nKERNEL z(GLOBAL float* out, GLOBAL const float* in, uint nx, uint ny) {\n  uint i = GID0, j = GID1;\n  for (uint t = 0; t < 3; t++)\n    for (uint k = 1; k <= NZ; k++) {\n      out[(k * ny + j) * nx + i] += in[i + (uint)(nx * 2)];\n    }\n}";
    let walks = source_walks(src, "z");
    assert_eq!(walks.len(), 1, "{walks:?}");
    // (k·ny + j)·nx + i: k's coefficient ny·nx; in[...] does not move with k.
    assert_eq!(walks[0].param, 0);
    assert_eq!(walks[0].stride, Sym::times(p(3), p(2)));
    // NZ steps a sweep, three sweeps.
    assert_eq!(walks[0].steps, Some(Sym::Num(24.0)));
}

#[test]
fn a_read_at_an_index_another_buffer_holds_is_a_gather() {
    let src = "KERNEL spmv(GLOBAL const float* val, GLOBAL const uint* col, GLOBAL const uint* row,\n GLOBAL const float* x, GLOBAL float* y, GLOBAL uint* bins, uint n) {\n  uint r = GID0; if (r >= n) return;\n  float sum = 0.0f;\n  for (uint k = row[r]; k < row[r + 1]; k++) sum += val[k] * x[col[k]];\n  y[col[r]] = sum;\n  bins[col[r]]++;\n  ATOMIC_ADD_U32(&bins[col[r]], 1u);\n  if (x[col[r]] == 0.0f) y[r] = 0.0f;\n}";
    let gathers = source_gathers(src, "spmv");
    // x[col[k]] read (its first read taken); y and bins written or addressed; row[r + 1]
    // and val[k] are no gathers.
    assert_eq!(gathers.len(), 1, "{gathers:?}");
    assert_eq!((gathers[0].param, gathers[0].index_param), (3, 1));
    assert_eq!(gathers[0].excerpt, "x[col[k]]");
    assert!(source_gathers(src, "other").is_empty());
    // An index held in a local first: followed where the subscript is the local (give or
    // take a number) and the local is written only where declared.
    let src = "KERNEL bc(GLOBAL const uint* row, GLOBAL const uint* col, GLOBAL const int* d,\n GLOBAL const uint* keys, GLOBAL const uint* prefix, GLOBAL float* y, uint n) {\n  uint v = GID0; uint k = keys[v]; uint s = row[v]; uint m = row[v]; m = 0;\n  for (uint e = row[v]; e < row[v + 1u]; e++) { uint w = col[e]; if (d[w] == 1) y[v] += 1.0f; }\n  y[v] += prefix[k - 1u] + y[s + v] + y[m];\n}";
    let gathers = source_gathers(src, "bc");
    let found: Vec<(usize, usize, &str)> = gathers
        .iter()
        .map(|g| (g.param, g.index_param, g.excerpt.as_str()))
        .collect();
    // d by col, prefix by keys; y[s + v] is an offset, not the local alone, and m is
    // assigned twice.
    assert_eq!(
        found,
        [
            (2, 1, "d[w], w = col[e]"),
            (4, 3, "prefix[k - 1u], k = keys[v]")
        ]
    );
    // A segment's base plus a loop's counter streams; a base plus a number is still a
    // gather (a neighbour of the element the index names).
    let src = "KERNEL seg(GLOBAL const int* offset, GLOBAL const float* in, GLOBAL const float* x,\n GLOBAL float* out, uint c) {\n  uint b = GID0; float s = 0.0f;\n  for (uint j = 0u; j < c; j++) s += in[offset[b] + j] + x[offset[b] + 1];\n  out[b] = s;\n}";
    let gathers = source_gathers(src, "seg");
    assert_eq!(gathers.len(), 1, "{gathers:?}");
    assert_eq!(
        (gathers[0].param, gathers[0].excerpt.as_str()),
        (2, "x[offset[b] + 1]")
    );
}

#[test]
fn deep_nesting_and_broken_text_are_read_without_a_panic() {
    let deep = format!(
        "KERNEL k(GLOBAL float* a, uint n) {{ for (uint k = 0; k < n; k++) {} a[k * n] = 0; }}",
        "if (n) ".repeat(20_000)
    );
    assert_eq!(source_walks(&deep, "k").len(), 1);
    let parens = format!(
        "KERNEL k(GLOBAL float* a, uint n) {{ for (uint k = 0; k < n; k++) a[{}k * n{}] = 0; }}",
        "(".repeat(20_000),
        ")".repeat(20_000)
    );
    assert!(source_walks(&parens, "k").is_empty());
    for broken in [
        "KERNEL k(GLOBAL float* a, uint n) { for (uint k = 0; k < n; k++) a[k * n",
        "KERNEL k(GLOBAL float* a, uint n) { for (",
        "KERNEL k(",
        "KERNEL k(GLOBAL float* a) { a[é * ü] = 0; for (uint k = 0; k < ñ; k++) a[k * ñ] = 1; }",
        "/* unterminated",
        "",
    ] {
        let _ = (source_walks(broken, "k"), source_gathers(broken, "k"));
    }
}

#[test]
fn a_while_loop_and_locals_are_read_through() {
    // SHOC's reduction: a grid-stride `while`, its step a local of the launch's width.
    let src = "#define RED_LOCAL 256u\nKERNEL reduce(GLOBAL const float* RESTRICT in, GLOBAL float* RESTRICT out, uint n)\n{\n    uint tid = LID0;\n    uint i = GROUP0 * (RED_LOCAL * 2u) + tid;\n    uint grid = RED_LOCAL * 2u * (GSIZE0 / RED_LOCAL);\n    float sum = 0.0f;\n    while (i < n) {\n        sum += in[i];\n        if (i + RED_LOCAL < n) sum += in[i + RED_LOCAL];\n        i += grid;\n    }\n    out[GROUP0] = sum;\n}\n";
    let walks = source_walks(src, "reduce");
    assert_eq!(walks.len(), 1, "{walks:?}");
    let grid = Sym::bin(Sym::Mul, Sym::Num(2.0), Sym::Global(0));
    assert_eq!((walks[0].param, &walks[0].stride), (0, &grid));
    let per = Sym::floor(Sym::over(p(2), grid));
    assert_eq!(walks[0].steps, Some(per));
    assert!(
        walks[0].excerpt.ends_with("in while (i < n)"),
        "{}",
        walks[0].excerpt
    );
    // A loop's own index in a local declared inside it: a column walk, n apart.
    let src = "KERNEL col(GLOBAL float* x, uint n, uint base) {\n  for (uint t = 1u; t < n; t++) {\n    uint p = base + t * n, q = p - n;\n    x[p] = x[q] * 0.5f;\n  }\n}";
    let walks = source_walks(src, "col");
    assert_eq!(walks.len(), 1, "{walks:?}");
    assert_eq!(
        (&walks[0].stride, &walks[0].steps),
        (&p(1), &Some(Sym::minus(p(1), Sym::Num(1.0))))
    );
    // The same index computed once before the loop holds its first value only: no walk.
    for body in [
        "uint t = 0; uint b = t * n; while (t < n) { x[b] = 0.0f; t++; }",
        "uint t = 0; while (t < n) { x[t * n] = 0.0f; t += 2; t++; }",
        "uint t = 0; do { x[t * n] = 0.0f; } while (++t < n);",
    ] {
        let src = format!("KERNEL w(GLOBAL float* x, uint n) {{ {body} }}");
        let walks = source_walks(&src, "w");
        assert!(walks.is_empty(), "{body}: {walks:?}");
    }
}

#[test]
fn what_is_no_walk_it_reports_nothing_for() {
    let none = |body: &str| {
        let src = format!(
            "__kernel void f(__global float* a, __global const int* idx, uint n, uint w) {{ uint g = get_global_id(0); {body} }}"
        );
        let walks = source_walks(&src, "f");
        assert!(walks.is_empty(), "{body}: {walks:?}");
    };
    // A row walked element by element, a small literal stride, a gather, a stride the
    // work item computes, a loop counting down, a counter squared, a stride in a local
    // assigned twice.
    none("for (uint k = 0; k < n; k++) a[g * n + k] = 0;");
    none("for (uint k = 0; k < n; k++) a[g + 4 * k] = 0;");
    none("for (uint k = 0; k < n; k++) a[idx[k]] += 1.0f;");
    none("for (uint k = 0; k < n; k++) a[g + k * g] = 0;");
    none("for (uint k = n; k > 0; k--) a[g + k * n] = 0;");
    none("for (uint k = 0; k < n; k++) a[g + k * k * n] = 0;");
    none("uint s = w; s = 2; for (uint k = 0; k < n; k++) a[g + k * s] = 0;");
    // A parameter stride is a walk, its steps unknown where the bound is the item's own.
    let src = "__kernel void f(__global float* a, uint n, uint w) { uint g = get_global_id(0); for (uint k = 0; k < g; k++) a[g + k * w] = 0; }";
    let walks = source_walks(src, "f");
    assert_eq!(walks.len(), 1);
    assert_eq!(
        (walks[0].stride.clone(), walks[0].steps.clone()),
        (p(2), None)
    );
}
