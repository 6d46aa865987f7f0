//! The target system, with the DVM Predictor's own parameters (its `Predictor.par`): the
//! system type, the start time and the time per byte of a message, the processors' power
//! ratio and the processor topology.
//!
//! A message of `n` bytes takes `T = start_time + n · send_byte_time` (the Predictor's linear
//! model). `power` is the ratio of the measured processor's performance to the target's: a
//! target processor half as fast has `power = 2`, and every compute time of the trace is
//! multiplied by it.

use serde::{Deserialize, Serialize};

use super::ClusterError;
use crate::units::Seconds;

/// How messages share the interconnect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum NetworkKind {
    /// A bus (the Predictor's `network`, a network of workstations): one message at a time,
    /// so a set of messages takes the sum of their times.
    #[serde(rename = "network")]
    Bus,
    /// A grid of point-to-point links (the Predictor's `transputer`): messages travel at once;
    /// the set takes the time of the farthest one, pipelined over its hops.
    #[serde(rename = "transputer")]
    Grid,
}

impl NetworkKind {
    /// The name the network file uses.
    pub fn file_name(self) -> &'static str {
        match self {
            NetworkKind::Bus => "network",
            NetworkKind::Grid => "transputer",
        }
    }
}

/// The network file as written: times in microseconds, as in the Predictor's `Predictor.par`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetworkFile {
    /// `network` (a bus) or `transputer` (a grid).
    #[serde(rename = "type")]
    pub kind: NetworkKind,
    /// Start time of a message, microseconds.
    pub start_time: f64,
    /// Time to send one byte, microseconds.
    pub send_byte_time: f64,
    /// Measured processor's performance over the target processor's (1 = the same).
    #[serde(default = "one")]
    pub power: f64,
    /// The processor grid, e.g. `[2, 2]` (optional: the command line may give it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology: Option<Vec<usize>>,
    /// Where the numbers come from (free text, e.g. the measuring command).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

fn one() -> f64 {
    1.0
}

/// The target system, in seconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Network {
    /// Bus or grid.
    pub kind: NetworkKind,
    /// Start time of a message, `Ts`.
    pub start: Seconds,
    /// Time per byte, `Tb`, seconds per byte.
    pub byte_time: f64,
    /// Measured over target processor performance: compute times are multiplied by it.
    pub power: f64,
    /// The processor grid the file names, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology: Option<Vec<usize>>,
}

impl Network {
    /// A network after checking every value: times finite and not negative, power a speed
    /// ratio from 1e-6 to 1e6, topology extents at least 1.
    pub fn new(
        kind: NetworkKind,
        start: Seconds,
        byte_time: f64,
        power: f64,
        topology: Option<Vec<usize>>,
    ) -> Result<Self, ClusterError> {
        let bad = |what: &str, v: f64| {
            ClusterError::Network(format!("{what} must be a finite number ≥ 0, got {v:e}"))
        };
        if !start.0.is_finite() || start.0 < 0.0 {
            return Err(bad("start_time", start.0 * 1e6));
        }
        if !byte_time.is_finite() || byte_time < 0.0 {
            return Err(bad("send_byte_time", byte_time * 1e6));
        }
        if !power.is_finite() || !(1e-6..=1e6).contains(&power) {
            return Err(ClusterError::Network(format!(
                "power must be a speed ratio from 1e-6 to 1e6, got {power:e}"
            )));
        }
        if let Some(t) = &topology {
            if t.is_empty() || t.contains(&0) {
                return Err(ClusterError::Network(format!(
                    "topology needs extents ≥ 1, got {t:?}"
                )));
            }
        }
        Ok(Self {
            kind,
            start,
            byte_time,
            power,
            topology,
        })
    }

    /// Parse a network file (TOML, the Predictor's fields, microseconds).
    ///
    /// ```
    /// use harness::model::cluster::{Network, NetworkKind};
    /// let n = Network::from_toml("type = \"network\"\nstart_time = 75\nsend_byte_time = 0.2\n")
    ///     .unwrap();
    /// assert_eq!(n.kind, NetworkKind::Bus);
    /// assert!((n.start.0 - 75e-6).abs() < 1e-15 && n.power == 1.0);
    /// ```
    pub fn from_toml(text: &str) -> Result<Self, ClusterError> {
        let file: NetworkFile = toml::from_str(text).map_err(|e| {
            ClusterError::Network(e.message().lines().next().unwrap_or("").to_string())
        })?;
        Self::new(
            file.kind,
            Seconds(file.start_time * 1e-6),
            file.send_byte_time * 1e-6,
            file.power,
            file.topology,
        )
    }

    /// The network file for this network, with a `source` line.
    pub fn to_file(&self, source: Option<String>) -> NetworkFile {
        NetworkFile {
            kind: self.kind,
            start_time: self.start.0 * 1e6,
            send_byte_time: self.byte_time * 1e6,
            power: self.power,
            topology: self.topology.clone(),
            source,
        }
    }

    /// The same network with another power ratio.
    pub fn with_power(mut self, power: f64) -> Result<Self, ClusterError> {
        self.power = power;
        Self::new(
            self.kind,
            self.start,
            self.byte_time,
            self.power,
            self.topology,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_predictor_example_parses_and_bad_values_are_refused() {
        let text = "type = \"transputer\"\nstart_time = 75\nsend_byte_time = 0.2\npower = 1.0\ntopology = [2, 2]\n";
        let n = Network::from_toml(text).unwrap();
        assert_eq!(n.kind, NetworkKind::Grid);
        assert!((n.byte_time - 0.2e-6).abs() < 1e-18);
        assert_eq!(n.topology, Some(vec![2, 2]));
        let back = toml::to_string(&n.to_file(None)).unwrap();
        let again = Network::from_toml(&back).unwrap();
        assert!((again.byte_time / n.byte_time - 1.0).abs() < 1e-12 && again.kind == n.kind);
        for bad in [
            "type = \"bus\"\nstart_time = 1\nsend_byte_time = 1\n",
            "type = \"network\"\nstart_time = -1\nsend_byte_time = 1\n",
            "type = \"network\"\nstart_time = 1\nsend_byte_time = nan\n",
            "type = \"network\"\nstart_time = 1\nsend_byte_time = 1\npower = 0\n",
            "type = \"network\"\nstart_time = 1\nsend_byte_time = 1\ntopology = [2, 0]\n",
            "type = \"network\"\nstart_time = 1\n",
            "type = \"network\"\nstart_time = 1\nsend_byte_time = 1\nspeed = 3\n",
        ] {
            assert!(Network::from_toml(bad).is_err(), "{bad}");
        }
    }
}
