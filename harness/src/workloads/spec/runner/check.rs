//! The check of a run's result: against the spec's formula, or against a reference run of
//! this spec or another on another device, in the buffer's own precision.

use super::bytes::from_bytes;
use super::{invalid, Executed};
use crate::backend::{discover, select, Device};
use crate::workloads::session::compare;
use crate::workloads::spec::format::{CheckSpec, Element, Expected, SpecWorkload};
use crate::workloads::{Verification, WorkloadError};

impl SpecWorkload {
    fn download_values(
        &self,
        run: &mut Executed<'_>,
        index: usize,
    ) -> Result<Vec<f64>, WorkloadError> {
        let element = self.buffers[index].element;
        let mut bytes = vec![0u8; run.lengths[index] * element.bytes()];
        let t = run
            .session
            .device
            .download(&run.buffers[index], &mut bytes)?;
        run.session.phases.add("download", t);
        Ok(from_bytes(element, &bytes))
    }

    pub(super) fn check_result(
        &self,
        check: &CheckSpec,
        run: &mut Executed<'_>,
        size: usize,
        iterations: usize,
    ) -> Result<Verification, WorkloadError> {
        let got = self.download_values(run, check.buffer)?;
        let mut described = "the spec's formula".to_string();
        let want: Vec<f64> = match &check.expected {
            Expected::Formula(f) => {
                let initial: Vec<&[f64]> = run.initial.iter().map(Vec::as_slice).collect();
                super::formula_values(f, &run.vars, self.slots.element, &initial, got.len())
                    .map_err(|m| invalid(self, format!("check: {m}")))?
            }
            Expected::Reference { spec, device } => {
                let (values, against) = self.reference_values(
                    spec.as_deref(),
                    device.as_ref(),
                    run,
                    check,
                    size,
                    iterations,
                )?;
                described = against;
                values
            }
        };
        // Compare in the buffer's own precision.
        let verification = match self.buffers[check.buffer].element {
            Element::F64 => compare(&got, &want, check.tolerance),
            _ => {
                let narrow = |v: &[f64]| v.iter().map(|&x| x as f32).collect::<Vec<f32>>();
                compare(&narrow(&got), &narrow(&want), check.tolerance)
            }
        };
        Ok(Verification {
            against: Some(described),
            ..verification
        })
    }

    /// The reference run's values of the checked buffer: `spec` (this one when `None`)
    /// run on `device` (the measured one when `None`) with the same size, parameters and
    /// iterations.
    fn reference_values(
        &self,
        spec: Option<&SpecWorkload>,
        device: Option<&crate::backend::DeviceSelector>,
        run: &Executed<'_>,
        check: &CheckSpec,
        size: usize,
        iterations: usize,
    ) -> Result<(Vec<f64>, String), WorkloadError> {
        let measured = run.session.device;
        let list;
        let reference_device: &dyn Device = match device {
            None => measured,
            Some(selector) => {
                list = discover();
                let index = select(&list, selector)
                    .map_err(|e| invalid(self, format!("check: the reference device: {e}")))?;
                list.devices[index].as_ref()
            }
        };
        if spec.is_none()
            && reference_device.info().name == measured.info().name
            && reference_device.info().backend == measured.info().backend
        {
            return Err(invalid(
                self,
                format!(
                    "check: the reference device is the measured device ({}): the run would be compared with itself; name another device in check.device",
                    measured.info().name
                ),
            ));
        }
        let named = self.parameter_values(size)?;
        let reference = match spec {
            None => self.clone(),
            Some(other) => {
                let mut other = other.clone();
                for (name, value) in &named {
                    if let Ok(slot) = other.params.override_slot(name) {
                        other.overrides.push((slot, *value));
                    }
                }
                other
            }
        };
        let keep = vec![false; reference.buffers.len()];
        let mut done = reference
            .execute(reference_device, size, iterations, &keep)
            .map_err(|e| invalid(self, format!("check: the reference run: {e}")))?;
        let name = &self.buffers[check.buffer].name;
        let index = reference
            .buffers
            .iter()
            .position(|b| &b.name == name)
            .ok_or_else(|| invalid(self, format!("check: the reference has no buffer {name}")))?;
        if done.lengths[index] != run.lengths[check.buffer] {
            return Err(invalid(
                self,
                format!(
                    "check: the reference's buffer {name} has {} elements, this run's {}",
                    done.lengths[index], run.lengths[check.buffer]
                ),
            ));
        }
        let what = match spec {
            None => "this spec".to_string(),
            Some(other) => other
                .path
                .file_name()
                .map_or_else(|| other.name.clone(), |f| f.to_string_lossy().into_owned()),
        };
        let against = format!("{what} on {}", reference_device.info().name);
        Ok((reference.download_values(&mut done, index)?, against))
    }
}
