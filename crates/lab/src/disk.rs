//! The disk under a benchmark's data directories: which filesystem it is,
//! what one fdatasync costs there, and how many cache flushes the block
//! device has completed.
//!
//! A durable commit waits for an fdatasync, so the fsync latency of the
//! filesystem bounds what one client can commit per second, and a
//! benchmark of durable commits means little without it. The flush counter
//! in /proc/diskstats counts the device-level flushes those fsyncs turn
//! into: divided by the transactions of a run, it shows whether commits
//! shared them (group commit) or paid one each.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A mounted filesystem, from /proc/self/mounts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Filesystem {
    pub mount_point: PathBuf,
    pub device: String,
    pub fstype: String,
    pub options: String,
}

impl std::fmt::Display for Filesystem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {} on {} ({})", self.fstype, self.device, self.mount_point.display(), self.options)
    }
}

/// The filesystem that holds `path` (the mount with the longest mount point
/// that is a prefix of the canonical path).
pub fn filesystem(path: &Path) -> Option<Filesystem> {
    let path = fs::canonicalize(path).ok()?;
    let mounts = fs::read_to_string("/proc/self/mounts").ok()?;
    mounts
        .lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            let (device, mount_point, fstype, options) = (f.first()?, f.get(1)?, f.get(2)?, f.get(3)?);
            Some(Filesystem {
                mount_point: PathBuf::from(unescape_mount(mount_point)),
                device: unescape_mount(device),
                fstype: (*fstype).to_owned(),
                options: (*options).to_owned(),
            })
        })
        .filter(|m| path.starts_with(&m.mount_point))
        // Later mounts shadow earlier ones on the same point: max_by_key keeps the last.
        .max_by_key(|m| m.mount_point.components().count())
}

/// /proc/self/mounts writes space, tab, newline and backslash as `\ooo`.
fn unescape_mount(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal =
            bytes.get(i + 1..i + 4).and_then(|d| u8::from_str_radix(std::str::from_utf8(d).ok()?, 8).ok());
        match (bytes[i], octal) {
            (b'\\', Some(byte)) => {
                out.push(byte);
                i += 4;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The (major, minor) device number of the filesystem holding `path`.
pub fn device_number(path: &Path) -> Option<(u64, u64)> {
    let dev = fs::metadata(path).ok()?.dev();
    // glibc's gnu_dev_major and gnu_dev_minor.
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    Some((major, minor))
}

/// A block device's line in /proc/diskstats.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiskStats {
    pub name: String,
    /// Flush requests completed (the 16th statistic; Linux 5.5 and later).
    pub flushes: u64,
}

/// The statistics of device (major, minor); None for a device that is not
/// a block device (tmpfs, overlay) or a kernel without flush counts.
pub fn disk_stats(device: (u64, u64)) -> Option<DiskStats> {
    parse_diskstats(&fs::read_to_string("/proc/diskstats").ok()?, device)
}

fn parse_diskstats(text: &str, (major, minor): (u64, u64)) -> Option<DiskStats> {
    text.lines().find_map(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.first()?.parse::<u64>().ok()? != major || f.get(1)?.parse::<u64>().ok()? != minor {
            return None;
        }
        // Fields 0-2 are major, minor and name; statistic k is field 2 + k.
        Some(DiskStats { name: (*f.get(2)?).to_owned(), flushes: f.get(18)?.parse().ok()? })
    })
}

/// How the timed writes meet the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncPattern {
    /// Overwrite blocks of a file written and synced beforehand, as
    /// PostgreSQL does in its preallocated 16 MB WAL segments: the sync
    /// changes no metadata the journal must commit.
    InPlace,
    /// Append to a growing file, as snapscale's WAL segments were written
    /// until they were zero-filled ahead (storage crate's log.rs): every
    /// sync must also make the new file size durable.
    Append,
}

impl SyncPattern {
    pub fn describe(self) -> &'static str {
        match self {
            SyncPattern::InPlace => "8 kB write in place in a preallocated 16 MB file + fdatasync",
            SyncPattern::Append => "8 kB append to a growing file + fdatasync",
        }
    }
}

/// Latencies of write + fdatasync pairs, in microseconds.
#[derive(Clone, Debug, PartialEq)]
pub struct SyncLatency {
    pub pattern: SyncPattern,
    pub ops: usize,
    pub median_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
}

impl std::fmt::Display for SyncLatency {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: median {:.0} µs, p90 {:.0} µs, p99 {:.0} µs ({} syncs, so at most {:.0} strictly serial \
             syncs per second)",
            self.pattern.describe(),
            self.median_us,
            self.p90_us,
            self.p99_us,
            self.ops,
            1e6 / self.median_us
        )
    }
}

const BLOCK: usize = 8192;
const SPAN: u64 = 16 << 20;

/// Times write + fdatasync of 8 kB blocks in a file in `dir` for about
/// `duration` (at least 20 syncs), then removes the file.
pub fn fdatasync_latency(dir: &Path, pattern: SyncPattern, duration: Duration) -> io::Result<SyncLatency> {
    let path = dir.join(format!("fsync-probe-{}", std::process::id()));
    let result = time_syncs(&path, pattern, duration);
    let _ = fs::remove_file(&path);
    result
}

fn time_syncs(path: &Path, pattern: SyncPattern, duration: Duration) -> io::Result<SyncLatency> {
    let mut file = OpenOptions::new().create(true).read(true).write(true).truncate(true).open(path)?;
    let block = vec![0xa5_u8; BLOCK];
    if pattern == SyncPattern::InPlace {
        for _ in 0..SPAN / BLOCK as u64 {
            file.write_all(&block)?;
        }
        file.sync_all()?;
    }
    let mut micros = Vec::new();
    let mut offset = 0;
    let start = Instant::now();
    while (start.elapsed() < duration || micros.len() < 20) && micros.len() < 1_000_000 {
        let t = Instant::now();
        match pattern {
            SyncPattern::InPlace => {
                file.write_all_at(&block, offset)?;
                offset = (offset + BLOCK as u64) % SPAN;
            }
            SyncPattern::Append => file.write_all(&block)?,
        }
        file.sync_data()?;
        micros.push(t.elapsed().as_secs_f64() * 1e6);
    }
    micros.sort_by(f64::total_cmp);
    let at = |q: f64| micros[((micros.len() - 1) as f64 * q).round() as usize];
    Ok(SyncLatency { pattern, ops: micros.len(), median_us: at(0.5), p90_us: at(0.9), p99_us: at(0.99) })
}

/// Runs PostgreSQL's `pg_test_fsync -s seconds` on a file in `dir` and
/// returns its fdatasync line for one 8 kB write (the wal_sync_method
/// PostgreSQL uses on Linux), or why not.
pub fn pg_test_fsync(pg_bin: &Path, dir: &Path, seconds: u32) -> Result<String, String> {
    let program = pg_bin.join("pg_test_fsync");
    let file = dir.join(format!("pg_test_fsync-{}", std::process::id()));
    let output = Command::new(&program)
        .args(["-s", &seconds.to_string(), "-f"])
        .arg(&file)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", program.display()));
    let _ = fs::remove_file(&file);
    let output = output?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        return Err(format!("{} exited with {}", program.display(), output.status));
    }
    fdatasync_line(&stdout).ok_or_else(|| "pg_test_fsync printed no fdatasync line".into())
}

/// The first fdatasync result (the one-8kB-write section), spaces collapsed.
fn fdatasync_line(stdout: &str) -> Option<String> {
    let line = stdout.lines().find(|l| l.trim_start().starts_with("fdatasync "))?;
    Some(line.split_whitespace().collect::<Vec<_>>().join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_diskstats() {
        let text = "\
 254       0 vda 1015984 34497 53218602 4889620 374133 121476 69525936 354705 0 186968 5269262 56092 58 \
 32303992 14439 141908 10497
 254       1 vda1 10 0 80 1 0 0 0 0 0 1 1 0 0 0 0 0 0
";
        assert_eq!(parse_diskstats(text, (254, 0)), Some(DiskStats { name: "vda".into(), flushes: 141908 }));
        assert_eq!(parse_diskstats(text, (254, 1)).map(|d| d.flushes), Some(0));
        assert_eq!(parse_diskstats(text, (8, 0)), None);
        // A kernel older than 5.5 has 14 statistics and no flush count.
        assert_eq!(parse_diskstats(" 8 0 sda 1 2 3 4 5 6 7 8 9 10 11 12 13 14\n", (8, 0)), None);
    }

    #[test]
    fn unescapes_mount_fields() {
        assert_eq!(unescape_mount("/mnt/my\\040disk"), "/mnt/my disk");
        assert_eq!(unescape_mount("/plain"), "/plain");
        assert_eq!(unescape_mount("trailing\\"), "trailing\\");
    }

    #[test]
    fn finds_pg_test_fsyncs_fdatasync_line() {
        let out = "\
Compare file sync methods using one 8kB write:
        open_datasync                      2043.753 ops/sec     489 usecs/op
        fdatasync                           714.601 ops/sec    1399 usecs/op
Compare file sync methods using two 8kB writes:
        fdatasync                          5172.810 ops/sec     193 usecs/op
";
        assert_eq!(fdatasync_line(out).as_deref(), Some("fdatasync 714.601 ops/sec 1399 usecs/op"));
    }

    #[test]
    fn times_syncs_in_both_patterns() {
        let dir = std::env::temp_dir();
        for pattern in [SyncPattern::InPlace, SyncPattern::Append] {
            let l = fdatasync_latency(&dir, pattern, Duration::ZERO).unwrap();
            assert_eq!(l.ops, 20);
            assert!(l.median_us > 0.0 && l.median_us <= l.p90_us && l.p90_us <= l.p99_us);
        }
        assert!(filesystem(&dir).is_some());
    }
}
