//! The machine a result was measured on.
//!
//! Snapshot-scaling numbers mean little without the core count, memory and
//! kernel behind them, so every report records them next to the results.

use std::fs;
use std::process::Command;
use std::thread;

/// What a report says when a fact could not be gathered.
const UNKNOWN: &str = "unknown";

/// A description of the machine and build that produced a result.
///
/// Every field is already formatted for display because the only consumer is
/// a report; a field that could not be read holds `"unknown"`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Machine {
    /// Host name, from `/proc/sys/kernel/hostname`.
    pub hostname: String,
    /// CPU model, from the first `model name` line of `/proc/cpuinfo`.
    pub cpu_model: String,
    /// CPUs this process may run on: [`thread::available_parallelism`] honours
    /// affinity masks and cgroup quotas, which is what bounds the benchmark,
    /// so it can be lower than the machine's CPU count.
    pub logical_cpus: String,
    /// Total memory such as `"62.7 GiB"`, from `MemTotal` in `/proc/meminfo`.
    pub memory: String,
    /// Kernel release, from `/proc/sys/kernel/osrelease`.
    pub kernel: String,
    /// Output of `rustc --version` found on `PATH` at run time; usually, but
    /// not necessarily, the compiler that built this binary.
    pub rustc: String,
    /// `"debug"` or `"release"`: debug builds are too slow for their numbers
    /// to be comparable, so a report must say which one produced it.
    pub profile: String,
}

impl Machine {
    /// Gathers the description of the current machine.
    ///
    /// Never fails: a report is still worth writing when a fact is missing
    /// (non-Linux system, restricted `/proc`, no `rustc`), so each missing
    /// fact becomes `"unknown"`.
    pub fn detect() -> Machine {
        Machine {
            hostname: read_trimmed("/proc/sys/kernel/hostname"),
            cpu_model: fs::read_to_string("/proc/cpuinfo")
                .ok()
                .and_then(|text| cpu_model(&text))
                .unwrap_or_else(|| UNKNOWN.to_owned()),
            logical_cpus: thread::available_parallelism()
                .map_or_else(|_| UNKNOWN.to_owned(), |n| n.to_string()),
            memory: fs::read_to_string("/proc/meminfo")
                .ok()
                .and_then(|text| mem_total_gib(&text))
                .map_or_else(|| UNKNOWN.to_owned(), |gib| format!("{gib:.1} GiB")),
            kernel: read_trimmed("/proc/sys/kernel/osrelease"),
            rustc: rustc_version(),
            profile: if cfg!(debug_assertions) { "debug" } else { "release" }.to_owned(),
        }
    }

    /// Renders the description as a Markdown bullet list.
    pub fn markdown(&self) -> String {
        [
            ("Host", &self.hostname),
            ("CPU", &self.cpu_model),
            ("Logical CPUs", &self.logical_cpus),
            ("Memory", &self.memory),
            ("Kernel", &self.kernel),
            ("rustc", &self.rustc),
            ("Build profile", &self.profile),
        ]
        .iter()
        .map(|(name, value)| format!("- **{name}:** {value}\n"))
        .collect()
    }
}

/// Reads a one-line `/proc` file, or `"unknown"` if it cannot be read.
fn read_trimmed(path: &str) -> String {
    match fs::read_to_string(path) {
        Ok(text) if !text.trim().is_empty() => text.trim().to_owned(),
        _ => UNKNOWN.to_owned(),
    }
}

/// Finds the first `model name` in `/proc/cpuinfo` text.
///
/// Only the first is reported: mixed-model machines are rare enough that a
/// single name is more useful than a list.
fn cpu_model(cpuinfo: &str) -> Option<String> {
    cpuinfo.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        (key.trim() == "model name" && !value.trim().is_empty()).then(|| value.trim().to_owned())
    })
}

/// Parses `MemTotal` (reported in KiB) from `/proc/meminfo` text into GiB.
fn mem_total_gib(meminfo: &str) -> Option<f64> {
    let line = meminfo.lines().find_map(|line| line.strip_prefix("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().next()?.parse().ok()?;
    Some(kib as f64 / (1024.0 * 1024.0))
}

/// Asks the `rustc` on `PATH` for its version, or `"unknown"`.
fn rustc_version() -> String {
    Command::new("rustc")
        .arg("--version")
        .output()
        .ok()
        .filter(|output| output.status.success())
        .and_then(|output| String::from_utf8(output.stdout).ok())
        .map(|text| text.trim().to_owned())
        .filter(|text| !text.is_empty())
        .unwrap_or_else(|| UNKNOWN.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_first_cpu_model() {
        let cpuinfo = "processor\t: 0\nvendor_id\t: GenuineIntel\n\
                       model name\t: Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz\n\n\
                       processor\t: 1\nmodel name\t: Other\n";
        assert_eq!(cpu_model(cpuinfo).as_deref(), Some("Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz"));
        assert_eq!(cpu_model("processor\t: 0\n"), None);
    }

    #[test]
    fn parses_mem_total() {
        let meminfo = "MemTotal:       65748516 kB\nMemFree:        1000 kB\n";
        let gib = mem_total_gib(meminfo).unwrap();
        assert_eq!(format!("{gib:.1}"), "62.7");
        assert_eq!(mem_total_gib("MemFree: 1 kB\n"), None);
    }

    #[test]
    fn detect_fills_every_field() {
        let machine = Machine::detect();
        let markdown = machine.markdown();
        assert_eq!(markdown.lines().count(), 7);
        assert!(markdown.lines().all(|line| line.starts_with("- **")));
        assert!(!machine.logical_cpus.is_empty());
        assert!(machine.profile == "debug" || machine.profile == "release");
    }
}
