//! `harness spec-init`: a first spec for a kernel, written from its source, so that a user
//! who brings a kernel starts from its own buffers and arguments instead of an example's.
//! Each kernel parameter becomes a buffer (a pointer) or a spec parameter (a scalar, named
//! after it in capitals; one called `n` is the size itself), and every answer the source
//! cannot give (a length, a scalar's value, the launch's width, its bytes) is written
//! `"TODO"`, which the spec loader refuses by name until it is given. The walks and gathers
//! the source shows ([`super::source_access`]) come as commented suggestions.

use super::compiled::Code;
use super::params::RESERVED;
use super::source_access::{
    kernel_names, kernel_params, source_gathers, source_walks, write_only_params, Sym,
};

/// Why no spec could be written.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ScaffoldError {
    /// The source defines no kernel the reader recognises.
    #[error("no kernel found (a definition `KERNEL name(…) {{`, `__kernel void name(…) {{` or `__global__ void name(…) {{`)")]
    NoKernel,
    /// Several kernels and none named.
    #[error("it defines {} kernels: name one with --kernel ({})", .0.len(), .0.join(", "))]
    WhichKernel(Vec<String>),
    /// The named kernel is not among them.
    #[error("no kernel '{0}' in it (it defines {1})")]
    UnknownKernel(String, String),
}

/// The kernel a spec is to be written for: `asked`, or the source's only one.
pub fn pick_kernel(source: &str, asked: Option<&str>) -> Result<String, ScaffoldError> {
    let names = kernel_names(source);
    match (asked, names.as_slice()) {
        (_, []) => Err(ScaffoldError::NoKernel),
        (Some(k), _) if names.iter().any(|n| n == k) => Ok(k.to_string()),
        (Some(k), _) => Err(ScaffoldError::UnknownKernel(k.into(), names.join(", "))),
        (None, [only]) => Ok(only.clone()),
        (None, _) => Err(ScaffoldError::WhichKernel(names)),
    }
}

/// The spec parameter a scalar kernel parameter becomes: its name in capitals, `N` (the
/// size) for one called `n`, with a `_` where capitals would make a reserved name or
/// begin with a digit.
fn spec_name(kernel_param: &str) -> String {
    let upper = kernel_param.to_ascii_uppercase();
    if RESERVED.contains(&upper.as_str()) || upper.starts_with(|c: char| c.is_ascii_digit()) {
        format!("{upper}_")
    } else {
        upper
    }
}

/// A first spec for `kernel` in `source` (its file `source_file`, next to which the spec is
/// to be saved), as TOML text.
pub fn scaffold(source: &str, source_file: &str, kernel: &str) -> Result<String, ScaffoldError> {
    let params = kernel_params(source, kernel).ok_or_else(|| {
        ScaffoldError::UnknownKernel(kernel.into(), kernel_names(source).join(", "))
    })?;
    let name = |i: usize| -> String {
        let p = &params[i];
        if p.pointer {
            p.name.clone()
        } else {
            spec_name(&p.name)
        }
    };
    let mut out = format!(
        "# A first spec for the kernel `{kernel}` of {source_file}, written by `harness spec-init`.\n\
         # Answer every TODO (docs/spec-format.md explains each key); the spec\n\
         # loads once none is left. Then: harness run THIS.toml --size 1000 --device opencl\n\
         name = \"{kernel}\"\nsource = \"{source_file}\"\n\n"
    );
    let scalars: Vec<usize> = (0..params.len()).filter(|&i| !params[i].pointer).collect();
    out.push_str("[params]\n# N is the size (--size); each scalar argument is a parameter, its value an\n# expression of N and the parameters above it.\n");
    for &i in &scalars {
        if name(i) != "N" {
            out.push_str(&format!(
                "{} = \"TODO\"  # `{} {}`\n",
                name(i),
                params[i].declaration,
                params[i].name
            ));
        }
    }
    let write_only = write_only_params(source, kernel);
    for (i, p) in params.iter().enumerate().filter(|(_, p)| p.pointer) {
        let random = format!(
            "{{ random = {{ lo = -1.0, hi = 1.0, seed = {} }} }}  # or {{ constant = 0.0 }}, {{ formula = \"i % 7\" }}, \"none\"",
            i + 1
        );
        // An output the kernel never reads needs no contents uploaded.
        let (role, init) = if p.constant {
            ("read only (const)", random)
        } else if write_only.contains(&i) {
            (
                "written only (each mention an assignment)",
                "\"none\"  # nothing uploaded: the kernel never reads it".to_string(),
            )
        } else {
            ("read or written", random)
        };
        let ty = p.element.unwrap_or("TODO");
        out.push_str(&format!(
            "\n[[buffers]]\nname = \"{}\"  # `{} {}`: {role}\ntype = \"{ty}\"{}\nlength = \"TODO\"  # elements\ninit = {init}\n",
            name(i),
            p.declaration,
            p.name,
            if p.element.is_none() { "  # f32, f64, u32 or i32" } else { "" },
        ));
    }
    let args: Vec<String> = params
        .iter()
        .enumerate()
        .map(|(i, p)| {
            if p.pointer {
                format!("\"buf:{}\"", name(i))
            } else {
                format!("\"{}:{}\"", p.element.unwrap_or("TODO"), name(i))
            }
        })
        .collect();
    out.push_str(&format!(
        "\n[[launches]]\nkernel = \"{kernel}\"\nglobal = [\"TODO\"]  # work items per dimension, e.g. [\"N\"] or [\"NX\", \"NY\"]\n# local = [\"64\"]  # work-group size per dimension (the device's choice without it)\nargs = [{}]\nbytes = \"TODO\"  # bytes one launch moves, each element read or written counted once\n# flops = \"…\"  # floating-point operations one launch runs (an FMA counts two)\n",
        args.join(", ")
    ));
    // A parameter's slot is its position; the launch's width, past them all, is written out.
    let width = params.len();
    let text = |sym: &Sym| -> String {
        sym.to_code(&|i| Some(Code::Var(i)), &|_| Some(Code::Var(width)))
            .map_or("?".into(), |c| {
                c.text(&|slot| {
                    if slot == width {
                        "the global size".into()
                    } else {
                        name(slot)
                    }
                })
            })
    };
    let walks: Vec<String> = source_walks(source, kernel)
        .iter()
        .map(|w| {
            format!(
                "{} = {{ stride = \"{}\", steps = \"{}\" }}",
                name(w.param),
                text(&w.stride),
                w.steps.as_ref().map_or("?".into(), text)
            )
        })
        .collect();
    if !walks.is_empty() {
        out.push_str(&format!(
            "# Its source walks these buffers a stride apart (each work item's steps): check, then\n# uncomment (docs/spec-format.md, `walks`):\n# walks = {{ {} }}\n",
            walks.join(", ")
        ));
    }
    let gathers: Vec<String> = source_gathers(source, kernel)
        .iter()
        .map(|g| format!("{} = \"…\"", name(g.param)))
        .collect();
    if !gathers.is_empty() {
        out.push_str(&format!(
            "# Its source reads these at indices another buffer holds: where they scatter, uncomment\n# with the launch's count of such reads (docs/spec-format.md, `gathers`):\n# gathers = {{ {} }}\n",
            gathers.join(", ")
        ));
    }
    out.push_str(
        "\n# How a run is checked (docs/spec-format.md, \"Check\"): a formula for each element, or a\n# reference spec run on the same device and compared:\n# [check]\n# buffer = \"…\"\n# formula = \"…\"\n# tolerance = 1e-5\n",
    );
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GEMM: &str = include_str!("../../../../kernels/examples/gemm.kern");

    #[test]
    fn a_kernel_is_picked_by_name_or_as_the_only_one() {
        assert_eq!(pick_kernel(GEMM, Some("gemm")).unwrap(), "gemm");
        assert!(matches!(
            pick_kernel(GEMM, None),
            Err(ScaffoldError::WhichKernel(k)) if k == ["gemm", "gemm_reference"]
        ));
        let err = pick_kernel(GEMM, Some("gem")).unwrap_err().to_string();
        assert!(
            err.contains("no kernel 'gem'") && err.contains("gemm_reference"),
            "{err}"
        );
        assert_eq!(
            pick_kernel("int main() { return 0; }", None),
            Err(ScaffoldError::NoKernel)
        );
        let one = "__kernel void saxpy(__global float* y, const float a, const uint n) { }";
        assert_eq!(pick_kernel(one, None).unwrap(), "saxpy");
    }

    #[test]
    fn the_gemm_example_gets_its_buffers_parameters_and_walk() {
        let text = scaffold(GEMM, "gemm.kern", "gemm").unwrap();
        for want in [
            "name = \"gemm\"",
            "source = \"gemm.kern\"",
            "NI = \"TODO\"",
            "NK = \"TODO\"",
            "ALPHA = \"TODO\"",
            "name = \"a\"  # `GLOBAL const float* RESTRICT a`: read only (const)",
            "name = \"c\"  # `GLOBAL float* RESTRICT c`: read or written",
            "args = [\"buf:a\", \"buf:b\", \"buf:c\", \"f32:ALPHA\", \"f32:BETA\", \"u32:NI\", \"u32:NJ\", \"u32:NK\"]",
            "# walks = { b = { stride = \"NJ\", steps = \"NK\" } }",
        ] {
            assert!(text.contains(want), "{want}\n{text}");
        }
        // It is TOML as written, and every TODO is a string the loader will refuse.
        let value: toml::Value = toml::from_str(&text).expect("TOML");
        assert_eq!(value["launches"][0]["global"][0].as_str(), Some("TODO"));
    }

    #[test]
    fn answered_the_gemm_scaffold_loads_as_a_spec() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("gemm.kern"), GEMM).unwrap();
        let mut text = scaffold(GEMM, "gemm.kern", "gemm").unwrap();
        let path = dir.path().join("gemm.toml");
        std::fs::write(&path, &text).unwrap();
        let refused = super::super::load(&path).unwrap_err().to_string();
        assert!(
            refused.contains("params.ALPHA: unknown variable 'TODO'"),
            "{refused}"
        );
        // ALPHA, BETA, NI, NJ, NK, the three lengths, the launch's width and its bytes.
        for answer in [
            "1.5",
            "1.2",
            "N",
            "N",
            "N",
            "NI * NK",
            "NK * NJ",
            "NI * NJ",
            "NJ\", \"NI",
            "4 * (NI * NK + NK * NJ + 2 * NI * NJ)",
        ] {
            text = text.replacen("\"TODO\"", &format!("\"{answer}\""), 1);
        }
        assert!(!text.contains("\"TODO\""), "{text}");
        std::fs::write(&path, &text).unwrap();
        let spec = super::super::load(&path).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(spec.buffers.len(), 3);
    }

    #[test]
    fn an_output_the_kernel_never_reads_is_not_uploaded() {
        let src = "__kernel void k(__global const float* x, __global float* y, __global float* z,\n __global float* w, uint n) { uint i = get_global_id(0); y[i] = x[i]; z[i] += x[i];\n w[i] = 0.0f; if (w[i] == 0.0f) y[i] = 1.0f; }";
        let text = scaffold(src, "k.cl", "k").unwrap();
        // y is only assigned; z is read by its +=, w by the comparison.
        assert!(
            text.contains("name = \"y\"  # `__global float* y`: written only (each mention an assignment)\ntype = \"f32\"\nlength = \"TODO\"  # elements\ninit = \"none\""),
            "{text}"
        );
        for read in ["z", "w"] {
            assert!(
                text.contains(&format!(
                    "name = \"{read}\"  # `__global float* {read}`: read or written"
                )),
                "{read}: {text}"
            );
        }
        assert_eq!(write_only_params(src, "k"), [1]);
    }

    #[test]
    fn names_that_would_collide_or_not_parse_are_changed() {
        assert_eq!(spec_name("n"), "N");
        assert_eq!(spec_name("iters"), "ITERS");
        assert_eq!(spec_name("m_rows"), "M_ROWS");
        let src = "__kernel void k(__global double* x, __global uchar* bytes, int i, long big) { }";
        let text = scaffold(src, "k.cl", "k").unwrap();
        assert!(text.contains("type = \"f64\""), "{text}");
        assert!(
            text.contains("type = \"TODO\"  # f32, f64, u32 or i32"),
            "{text}"
        );
        assert!(
            text.contains("\"i32:I\"") && text.contains("\"TODO:BIG\""),
            "{text}"
        );
    }
}
