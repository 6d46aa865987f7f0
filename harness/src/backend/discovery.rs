//! Finding devices: every backend's devices in one numbered list, notes about backends that
//! could not be used, and the `--device` selector.

use super::{cuda, host, opencl, BackendError, BackendKind, Device, DeviceClass};

/// All devices found, numbered in the order `harness devices` prints them.
pub struct DeviceList {
    /// The devices, CUDA first, then OpenCL, then the host.
    pub devices: Vec<Box<dyn Device>>,
    /// One line per backend that could not be used, or per environment fix applied.
    pub notes: Vec<String>,
}

/// Enumerate every backend's devices. Never fails: a backend that is missing adds a note.
pub fn discover() -> DeviceList {
    let mut devices: Vec<Box<dyn Device>> = Vec::new();
    let mut notes = Vec::new();
    let cuda_present = cuda::driver_present();
    if let Some(line) = opencl::register_nvidia_icd(cuda_present) {
        notes.push(line);
    }
    match cuda::devices() {
        Ok(found) => devices.extend(found.into_iter().map(|d| Box::new(d) as Box<dyn Device>)),
        Err(e) => notes.push(format!("cuda: {e}")),
    }
    match opencl::devices() {
        Ok(found) => devices.extend(found.into_iter().map(|d| Box::new(d) as Box<dyn Device>)),
        Err(e) => notes.push(format!("opencl: {e}")),
    }
    devices.push(Box::new(host::HostDevice::new()));
    DeviceList { devices, notes }
}

/// How a user names a device on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceSelector {
    /// The best device found: CUDA, then an OpenCL GPU, then an OpenCL CPU, then the host.
    Best,
    /// An index into the `harness devices` list.
    Index(usize),
    /// The first device of a backend.
    Backend(BackendKind),
    /// A case-insensitive part of a device's name.
    Name(String),
}

impl std::str::FromStr for DeviceSelector {
    type Err = String;

    /// An index, a backend (`cuda`, `opencl`, `host`), `best`, or part of a name; an empty
    /// selector is refused rather than taken to mean the first device.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        Ok(match s.to_ascii_lowercase().as_str() {
            "" => {
                return Err(
                    "an empty device selector: give an index, a backend (cuda, opencl, host) or part of a name"
                        .into(),
                )
            }
            "best" | "auto" => DeviceSelector::Best,
            "cuda" => DeviceSelector::Backend(BackendKind::Cuda),
            "opencl" | "ocl" => DeviceSelector::Backend(BackendKind::Opencl),
            "host" | "cpu" => DeviceSelector::Backend(BackendKind::Host),
            lower => match lower.parse::<usize>() {
                Ok(i) => DeviceSelector::Index(i),
                Err(_) => DeviceSelector::Name(s.to_string()),
            },
        })
    }
}

fn rank(device: &dyn Device) -> u8 {
    let info = device.info();
    match (info.backend, info.class) {
        (BackendKind::Cuda, _) => 0,
        (BackendKind::Opencl, DeviceClass::Gpu) => 1,
        (BackendKind::Opencl, DeviceClass::Cpu) => 2,
        (BackendKind::Host, _) => 3,
    }
}

/// Pick one device from the list; returns its index.
pub fn select(list: &DeviceList, selector: &DeviceSelector) -> Result<usize, BackendError> {
    let devices = &list.devices;
    let found = match selector {
        DeviceSelector::Best => (0..devices.len()).min_by_key(|&i| rank(devices[i].as_ref())),
        DeviceSelector::Index(i) => (*i < devices.len()).then_some(*i),
        DeviceSelector::Backend(kind) => devices.iter().position(|d| d.info().backend == *kind),
        DeviceSelector::Name(part) => {
            let part = part.to_lowercase();
            devices
                .iter()
                .position(|d| d.info().name.to_lowercase().contains(&part))
        }
    };
    found.ok_or_else(|| BackendError::NoSuchDevice {
        selector: match selector {
            DeviceSelector::Best => "best".into(),
            DeviceSelector::Index(i) => i.to_string(),
            DeviceSelector::Backend(kind) => kind.to_string(),
            DeviceSelector::Name(name) => name.clone(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_parse() {
        assert_eq!(
            "cuda".parse::<DeviceSelector>().unwrap(),
            DeviceSelector::Backend(BackendKind::Cuda)
        );
        assert_eq!(
            "2".parse::<DeviceSelector>().unwrap(),
            DeviceSelector::Index(2)
        );
        assert_eq!(
            "H100".parse::<DeviceSelector>().unwrap(),
            DeviceSelector::Name("H100".into())
        );
        assert_eq!(
            "best".parse::<DeviceSelector>().unwrap(),
            DeviceSelector::Best
        );
        // An empty selector is a mistake, not a wish for the first device.
        assert!(" ".parse::<DeviceSelector>().is_err());
    }

    #[test]
    fn host_is_always_found_and_selectable() {
        let list = discover();
        let i = select(&list, &DeviceSelector::Backend(BackendKind::Host)).unwrap();
        assert_eq!(list.devices[i].info().backend, BackendKind::Host);
        assert!(select(&list, &DeviceSelector::Best).is_ok());
        assert!(select(&list, &DeviceSelector::Name("no such device xyz".into())).is_err());
        assert!(select(&list, &DeviceSelector::Index(999)).is_err());
    }
}
