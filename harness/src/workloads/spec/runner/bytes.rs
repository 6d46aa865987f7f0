//! Values to and from a buffer's bytes, in its element type, native byte order.

use rayon::prelude::*;

use crate::workloads::spec::format::Element;

/// Write `v` as one `element` into `cell` (its width), native byte order.
pub(super) fn put(element: Element, v: f64, cell: &mut [u8]) {
    match element {
        Element::F32 => cell.copy_from_slice(&(v as f32).to_ne_bytes()),
        Element::F64 => cell.copy_from_slice(&v.to_ne_bytes()),
        Element::U32 => cell.copy_from_slice(&(v as u32).to_ne_bytes()),
        Element::I32 => cell.copy_from_slice(&(v as i32).to_ne_bytes()),
    }
}

pub(super) fn to_bytes(element: Element, values: &[f64]) -> Vec<u8> {
    let width = element.bytes();
    let mut out = vec![0u8; values.len() * width];
    out.par_chunks_mut(width * 4096)
        .zip(values.par_chunks(4096))
        .for_each(|(bytes, values)| {
            for (b, &v) in bytes.chunks_exact_mut(width).zip(values) {
                put(element, v, b);
            }
        });
    out
}

pub(super) fn from_bytes(element: Element, bytes: &[u8]) -> Vec<f64> {
    bytes
        .chunks_exact(element.bytes())
        .map(|c| match element {
            Element::F64 => f64::from_ne_bytes(c.try_into().unwrap_or([0; 8])),
            _ => {
                let w = [c[0], c[1], c[2], c[3]];
                match element {
                    Element::F32 => f64::from(f32::from_ne_bytes(w)),
                    Element::U32 => f64::from(u32::from_ne_bytes(w)),
                    _ => f64::from(i32::from_ne_bytes(w)),
                }
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_round_trip_every_element_type() {
        let values = [0.0f64, 1.0, 2.5, 7.0];
        for e in [Element::F32, Element::F64, Element::U32, Element::I32] {
            let want: Vec<f64> = values
                .iter()
                .map(|&v| {
                    if e == Element::U32 || e == Element::I32 {
                        v.floor()
                    } else {
                        v
                    }
                })
                .collect();
            assert_eq!(from_bytes(e, &to_bytes(e, &values)), want, "{e:?}");
        }
        assert_eq!(to_bytes(Element::F64, &[1.0]).len(), 8);
        assert_eq!(
            from_bytes(Element::I32, &to_bytes(Element::I32, &[-3.0])),
            [-3.0]
        );
    }
}
