//! The write-ahead log device: append-only segment files of checksummed
//! records, group commit, and the reader recovery uses.
//!
//! Record layout (little-endian), byte for byte:
//!
//! ```text
//!   0  u32  length of the whole record, header included (>= 17)
//!   4  u32  CRC-32C of bytes 8..length
//!   8  u64  LSN: the record's own position in the log
//!  16  u8   kind (the SQL layer's record kinds)
//!  17  ...  payload
//! ```
//!
//! The log is one byte stream; an LSN is a position in it. A segment file
//! is named by the LSN of its first byte (16 hex digits, `.seg`), holds
//! whole records only, and the next segment starts where it ends. A new
//! segment is started once the current one reaches the segment size.
//!
//! With fsync on, a segment is zero-filled to the segment size (and
//! synced) before records go into it, as PostgreSQL's are: a commit's
//! fdatasync then writes data blocks only, where an append that grows the
//! file also makes the journal commit its new size (about a fifth more
//! per sync on this project's machines; `snapscale lab disk`). A record
//! length of zero is therefore where the log ends in the last segment.
//!
//! Appends write into the current segment at once (under the append
//! lock), so records reach the page cache in LSN order. Durability is a
//! separate step: [`Log::flush`] waits until a flusher thread has
//! fdatasync'ed past the caller's record. The flusher syncs everything
//! written so far, so commits waiting together share one fsync (group
//! commit).
//!
//! A failed write or fsync is never retried and never counted as success:
//! the log becomes *broken*, every waiter and every later append gets the
//! error, and only a restart (which runs recovery) clears it. After a
//! failed fsync the kernel may have dropped the dirty pages and cleared
//! the error, so a retried fsync could report success for data that is
//! gone (PostgreSQL's 2018 fsync lesson).

// The group commit below is I/O under a std mutex and condition variable,
// not a lock-free protocol; loom builds leave this module out (lib.rs).
#![allow(
    clippy::disallowed_types,
    reason = "the WAL's group commit is not modelled by loom; std primitives are what it needs"
)]

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;

use snapscale_sqlstate::SqlState;
use tokio::sync::watch;

/// A log position.
pub type Lsn = u64;

/// An LSN as PostgreSQL prints one: high and low 32 bits in hex.
pub fn format_lsn(lsn: Lsn) -> String {
    format!("{:X}/{:X}", lsn >> 32, lsn & 0xFFFF_FFFF)
}

/// Parses PostgreSQL's `X/Y` LSN notation.
pub fn parse_lsn(text: &str) -> Option<Lsn> {
    let (hi, lo) = text.split_once('/')?;
    let hi = u32::from_str_radix(hi, 16).ok()?;
    let lo = u32::from_str_radix(lo, 16).ok()?;
    Some((u64::from(hi) << 32) | u64::from(lo))
}

/// Bytes of the record header.
pub const HEADER: usize = 17;

/// Why the log refuses work. Each says which SQLSTATE a statement that
/// needed the log fails with ([`LogError::sqlstate`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LogError {
    /// The disk (or the quota) is full: ENOSPC, EDQUOT.
    DiskFull(String),
    /// Another I/O failure; the message says what and why.
    Io(String),
    /// The server is shutting down: appends are refused, and waits for a
    /// flush end.
    ShuttingDown,
    /// The log was dropped while a flush was awaited.
    Closed,
}

impl LogError {
    /// PostgreSQL's SQLSTATE for this error.
    pub fn sqlstate(&self) -> SqlState {
        match self {
            LogError::DiskFull(_) => SqlState::DISK_FULL,
            LogError::Io(_) | LogError::Closed => SqlState::IO_ERROR,
            // What PostgreSQL's fast shutdown tells each session.
            LogError::ShuttingDown => SqlState::ADMIN_SHUTDOWN,
        }
    }
}

impl std::fmt::Display for LogError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LogError::DiskFull(m) | LogError::Io(m) => f.write_str(m),
            LogError::ShuttingDown => f.write_str("terminating connection due to administrator command"),
            LogError::Closed => f.write_str("the write-ahead log is closed"),
        }
    }
}

impl std::error::Error for LogError {}

fn io_error(what: &str, e: &io::Error) -> LogError {
    let message = format!("{what}: {e}; the server accepts no more writes until it is restarted");
    // ENOSPC (28) and EDQUOT (122): PostgreSQL's disk_full.
    if matches!(e.raw_os_error(), Some(28 | 122)) {
        LogError::DiskFull(message)
    } else {
        LogError::Io(message)
    }
}

/// One record read back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    pub lsn: Lsn,
    pub kind: u8,
    pub payload: Vec<u8>,
}

/// Encodes a record at `lsn`.
pub fn encode(lsn: Lsn, kind: u8, payload: &[u8], out: &mut Vec<u8>) {
    let len = (HEADER + payload.len()) as u32;
    let start = out.len();
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&lsn.to_le_bytes());
    out.push(kind);
    out.extend_from_slice(payload);
    let crc = crc32c::crc32c(&out[start + 8..]);
    out[start + 4..start + 8].copy_from_slice(&crc.to_le_bytes());
}

fn segment_name(start: Lsn) -> String {
    format!("{start:016X}.seg")
}

/// Segment files in `dir`, by start LSN.
fn segments(dir: &Path) -> io::Result<Vec<(Lsn, PathBuf)>> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else { continue };
        if let Some(hex) = name.strip_suffix(".seg") {
            if let Ok(start) = Lsn::from_str_radix(hex, 16) {
                out.push((start, path));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Writes zeros into `file` from `from` up to `size` and syncs it, so that
/// records later written over them change no file metadata (see the
/// module documentation). Leaves the file position past the zeros.
fn zero_fill(file: &mut File, from: u64, size: u64) -> io::Result<()> {
    if from >= size {
        return Ok(());
    }
    io::Seek::seek(file, io::SeekFrom::Start(from))?;
    let chunk = vec![0u8; (size - from).min(1 << 20) as usize];
    let mut left = size - from;
    while left > 0 {
        let n = left.min(chunk.len() as u64) as usize;
        file.write_all(&chunk[..n])?;
        left -= n as u64;
    }
    file.sync_all()
}

fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// What recovery found: the valid records from the requested start, and
/// where the valid log ends.
#[derive(Debug)]
pub struct ReadLog {
    pub records: Vec<Record>,
    pub end: Lsn,
    /// Why reading stopped before the end of the files, if it did.
    pub stopped: Option<String>,
    /// The stop is in the last segment: a torn tail (a crash mid-write).
    /// Anywhere else it is corruption or a missing segment: committed WAL
    /// would be lost, so recovery must refuse to go on.
    pub torn_tail: bool,
}

/// Reads every valid record at or after `from` into memory (tests and
/// small logs; recovery streams with [`Scan`]).
pub fn read(dir: &Path, from: Lsn) -> io::Result<ReadLog> {
    let mut scan = Scan::new(dir, from)?;
    let mut records = Vec::new();
    while let Some(r) = scan.next_record()? {
        records.push(r);
    }
    Ok(ReadLog {
        records,
        end: scan.end(),
        stopped: scan.stopped().map(str::to_owned),
        torn_tail: scan.torn_tail(),
    })
}

/// Reads the valid records at or after a start LSN one segment at a time,
/// so memory holds one segment, not the log. Stops at the first record
/// that is short, fails its CRC or names the wrong LSN. In the last
/// segment that is the torn tail of a crash; elsewhere it is reported as
/// such ([`Scan::torn_tail`] false), since a finished segment was synced
/// whole before the next one was started.
pub struct Scan {
    segs: Vec<(Lsn, PathBuf)>,
    /// Index of the next segment to load.
    next_seg: usize,
    /// The loaded segment: its start, its bytes, and the offset of the
    /// next record in it.
    current: Option<(Lsn, Vec<u8>, usize)>,
    end: Lsn,
    stopped: Option<String>,
    torn_tail: bool,
}

impl Scan {
    /// Positions a scan at `from` (the start of a record).
    pub fn new(dir: &Path, from: Lsn) -> io::Result<Scan> {
        let segs = segments(dir)?;
        // Start in the segment that contains `from`.
        let first = segs.iter().rposition(|(start, _)| *start <= from).unwrap_or(0);
        Ok(Scan { segs, next_seg: first, current: None, end: from, stopped: None, torn_tail: false })
    }

    /// Where the valid log read so far ends (after the last record returned
    /// once the scan is exhausted).
    pub fn end(&self) -> Lsn {
        self.end
    }

    /// Why the scan stopped before the end of the files, if it did.
    pub fn stopped(&self) -> Option<&str> {
        self.stopped.as_deref()
    }

    /// The stop was in the last segment (a torn tail, not damage).
    pub fn torn_tail(&self) -> bool {
        self.torn_tail
    }

    fn stop(&mut self, why: String) -> io::Result<Option<Record>> {
        self.torn_tail = self.next_seg == self.segs.len();
        self.stopped = Some(why);
        self.current = None;
        self.next_seg = self.segs.len();
        Ok(None)
    }

    /// The next valid record, or `None` at the end of the valid log.
    pub fn next_record(&mut self) -> io::Result<Option<Record>> {
        loop {
            if self.stopped.is_some() {
                return Ok(None);
            }
            let Some((start, bytes, at)) = &mut self.current else {
                let Some((start, path)) = self.segs.get(self.next_seg).cloned() else { return Ok(None) };
                self.next_seg += 1;
                if start > self.end {
                    self.torn_tail = false;
                    self.stopped =
                        Some(format!("no WAL between LSN {:X} and segment {}", self.end, path.display()));
                    return Ok(None);
                }
                let mut bytes = Vec::new();
                File::open(&path)?.read_to_end(&mut bytes)?;
                let at = (self.end.max(start) - start) as usize;
                self.current = Some((start, bytes, at));
                continue;
            };
            let (start, at) = (*start, *at);
            if at >= bytes.len() {
                self.end = self.end.max(start + bytes.len() as u64);
                self.current = None;
                continue;
            }
            let lsn = start + at as u64;
            let name = self.segs[self.next_seg - 1].1.display().to_string();
            let bad = |why: &str| format!("{why} at LSN {lsn:X} in {name}");
            self.end = lsn;
            if self.next_seg == self.segs.len() && bytes[at..bytes.len().min(at + 4)].iter().all(|&b| b == 0)
            {
                // A zero length in the zero-filled rest of the last
                // segment: the end of the log, not damage. Nothing after
                // it was synced (a sync covers everything written before
                // it).
                self.current = None;
                return Ok(None);
            }
            if bytes.len() - at < HEADER {
                return self.stop(bad("short record header"));
            }
            let len = u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes")) as usize;
            if len < HEADER || bytes.len() - at < len {
                return self.stop(bad("torn record"));
            }
            let crc = u32::from_le_bytes(bytes[at + 4..at + 8].try_into().expect("4 bytes"));
            if crc32c::crc32c(&bytes[at + 8..at + len]) != crc {
                return self.stop(bad("checksum mismatch"));
            }
            let own = u64::from_le_bytes(bytes[at + 8..at + 16].try_into().expect("8 bytes"));
            if own != lsn {
                return self.stop(bad("record names another LSN"));
            }
            let record = Record { lsn, kind: bytes[at + 16], payload: bytes[at + HEADER..at + len].to_vec() };
            self.current.as_mut().expect("loaded").2 = at + len;
            self.end = lsn + len as u64;
            return Ok(Some(record));
        }
    }
}

/// Splits a byte stream of whole records (as [`Log::read_bytes`] returns
/// it, or a standby receives it) into records, checking each as recovery
/// does. `lsn` is the position of the first byte. Returns the records and
/// how many bytes they cover; a trailing partial record is left for the
/// caller to complete with the next bytes. A record that fails its checks
/// is an error naming its LSN.
pub fn split_records(lsn: Lsn, bytes: &[u8]) -> Result<(Vec<Record>, usize), String> {
    let mut out = Vec::new();
    let mut at = 0usize;
    while bytes.len() - at >= HEADER {
        let len = u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes")) as usize;
        let here = lsn + at as u64;
        if len < HEADER {
            return Err(format!("invalid record length {len} at LSN {here:X}"));
        }
        if bytes.len() - at < len {
            break;
        }
        let crc = u32::from_le_bytes(bytes[at + 4..at + 8].try_into().expect("4 bytes"));
        if crc32c::crc32c(&bytes[at + 8..at + len]) != crc {
            return Err(format!("checksum mismatch at LSN {here:X}"));
        }
        let own = u64::from_le_bytes(bytes[at + 8..at + 16].try_into().expect("8 bytes"));
        if own != here {
            return Err(format!("record at LSN {here:X} names LSN {own:X}"));
        }
        out.push(Record { lsn: here, kind: bytes[at + 16], payload: bytes[at + HEADER..at + len].to_vec() });
        at += len;
    }
    Ok((out, at))
}

/// A fault to inject (tests of the failure paths: a full disk, a failing
/// fsync), taking effect at the next write or fsync.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The next write fails with ENOSPC.
    WriteNoSpace,
    /// The next fsync fails with EIO.
    FsyncIo,
}

struct Appender {
    /// Shared with whoever syncs it (the flusher, or a committer syncing
    /// its own commit), so a sync needs no duplicated descriptor.
    file: Arc<File>,
    fault: Option<Fault>,
    /// Start LSN of the current segment.
    segment_start: Lsn,
    /// Next LSN to write.
    next: Lsn,
    /// Set when a write or fsync failed.
    broken: Option<LogError>,
}

struct FlushState {
    /// Highest LSN handed to the flusher that is not yet known durable.
    requested: Lsn,
    shutdown: bool,
}

/// The log. See the module documentation.
pub struct Log {
    dir: PathBuf,
    segment_size: u64,
    /// fsync = off: "durable" means written to the page cache.
    fsync: bool,
    appender: Mutex<Appender>,
    flush: Mutex<FlushState>,
    wake: Condvar,
    /// The durable end of the log, or the error that broke it.
    durable: watch::Sender<Result<Lsn, LogError>>,
    /// Set (Release) by the flusher after its last sync at shutdown; read
    /// (Acquire) by waiters and appenders, who then get an error rather than
    /// wait for a flush that will never come.
    closed: std::sync::atomic::AtomicBool,
    /// A committer is syncing its own commit (SYNC-HERE, [`Log::flush_as`]);
    /// others wait for it rather than sync beside it.
    syncing: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for Log {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Log").field("dir", &self.dir).finish_non_exhaustive()
    }
}

impl Log {
    /// Opens the log in `dir` for appending at `end` (where [`read`] found
    /// the valid log to end): a torn tail beyond it is cut off, so new
    /// records never follow garbage. Starts the flusher thread.
    pub fn open(dir: &Path, end: Lsn, segment_size: u64, fsync: bool) -> io::Result<Arc<Log>> {
        fs::create_dir_all(dir)?;
        let segs = segments(dir)?;
        // Segments wholly beyond the end are leftovers of a torn tail.
        for (start, path) in &segs {
            if *start > end {
                fs::remove_file(path)?;
            }
        }
        // The segment to continue: the one holding `end`. If the log ends
        // before `end` (its tail was lost, and a checkpoint covers up to
        // `end`), a new segment starts at `end`.
        let reaches = |start: &Lsn, path: &PathBuf| {
            *start <= end && fs::metadata(path).map(|m| start + m.len() >= end).unwrap_or(false)
        };
        let (segment_start, file) =
            match segs.iter().rev().find(|(start, path)| *start <= end && reaches(start, path)) {
                Some((start, path)) => {
                    let file = OpenOptions::new().read(true).write(true).open(path)?;
                    file.set_len(end - start)?;
                    file.sync_all()?;
                    (*start, file)
                }
                None => {
                    let path = dir.join(segment_name(end));
                    let file =
                        OpenOptions::new().create(true).read(true).write(true).truncate(false).open(&path)?;
                    sync_dir(dir)?;
                    (end, file)
                }
            };
        let mut file = file;
        if fsync {
            zero_fill(&mut file, end - segment_start, segment_size)?;
        }
        io::Seek::seek(&mut file, io::SeekFrom::Start(end - segment_start))?;
        let (durable, _) = watch::channel(Ok(end));
        let log = Arc::new(Log {
            dir: dir.to_owned(),
            segment_size,
            fsync,
            appender: Mutex::new(Appender {
                file: Arc::new(file),
                fault: None,
                segment_start,
                next: end,
                broken: None,
            }),
            flush: Mutex::new(FlushState { requested: end, shutdown: false }),
            wake: Condvar::new(),
            durable,
            closed: std::sync::atomic::AtomicBool::new(false),
            syncing: std::sync::atomic::AtomicBool::new(false),
        });
        let flusher = Arc::clone(&log);
        thread::Builder::new().name("wal-flusher".into()).spawn(move || flusher.flusher())?;
        Ok(log)
    }

    fn appender(&self) -> std::sync::MutexGuard<'_, Appender> {
        self.appender.lock().expect("log appender poisoned")
    }

    /// The next LSN an append would get.
    pub fn insert_lsn(&self) -> Lsn {
        self.appender().next
    }

    /// Appends records (kind, payload) contiguously, in order, and returns
    /// the LSN after the last one. Not yet durable: see [`Log::flush`].
    pub fn append(&self, records: &[(u8, &[u8])]) -> Result<Lsn, LogError> {
        let mut a = self.appender();
        if let Some(e) = &a.broken {
            return Err(e.clone());
        }
        // Acquire: pairs with the Release store in `flusher` at shutdown.
        if self.closed.load(std::sync::atomic::Ordering::Acquire) {
            return Err(LogError::ShuttingDown);
        }
        let mut buf = Vec::with_capacity(records.iter().map(|(_, p)| p.len() + HEADER).sum());
        let mut lsn = a.next;
        for (kind, payload) in records {
            let before = buf.len();
            encode(lsn, *kind, payload, &mut buf);
            lsn += (buf.len() - before) as u64;
        }
        let written = match a.fault {
            Some(Fault::WriteNoSpace) => {
                // A partial write, as a filling disk produces.
                let _ = (&*a.file).write_all(&buf[..buf.len() / 2]);
                Err(io::Error::from_raw_os_error(28))
            }
            _ => (&*a.file).write_all(&buf),
        };
        if let Err(e) = written {
            let err = io_error("could not write to the write-ahead log", &e);
            return Err(self.break_log(&mut a, err));
        }
        a.next = lsn;
        if a.next - a.segment_start >= self.segment_size {
            // The finished segment is synced here, so the flusher only ever
            // syncs the current one.
            if let Err(e) = self.switch_segment(&mut a) {
                let err = io_error("could not start a write-ahead log segment", &e);
                return Err(self.break_log(&mut a, err));
            }
        }
        Ok(lsn)
    }

    /// Appends bytes that are already whole records framed at their own
    /// LSNs, starting exactly at the insert position (a standby writing
    /// what its primary sent: the same bytes at the same positions). The
    /// caller has checked them ([`split_records`]). Returns the new end.
    pub fn append_raw(&self, bytes: &[u8]) -> Result<Lsn, LogError> {
        let mut a = self.appender();
        if let Some(e) = &a.broken {
            return Err(e.clone());
        }
        // Acquire: pairs with the Release store in `flusher` at shutdown.
        if self.closed.load(std::sync::atomic::Ordering::Acquire) {
            return Err(LogError::ShuttingDown);
        }
        if let Err(e) = (&*a.file).write_all(bytes) {
            let err = io_error("could not write to the write-ahead log", &e);
            return Err(self.break_log(&mut a, err));
        }
        a.next += bytes.len() as u64;
        if a.next - a.segment_start >= self.segment_size {
            if let Err(e) = self.switch_segment(&mut a) {
                let err = io_error("could not start a write-ahead log segment", &e);
                return Err(self.break_log(&mut a, err));
            }
        }
        Ok(a.next)
    }

    /// Up to `max` bytes of the log starting at `from` and ending at or
    /// before `upto` (a WAL sender passes the durable end), read from the
    /// segment files: whole records and pieces of them, as a stream. An
    /// error of kind `NotFound` means the segment holding `from` was
    /// removed by a checkpoint.
    pub fn read_bytes(&self, from: Lsn, upto: Lsn, max: usize) -> io::Result<Vec<u8>> {
        if upto <= from {
            return Ok(Vec::new());
        }
        let segs = segments(&self.dir)?;
        let Some(i) = segs.iter().rposition(|(start, _)| *start <= from) else {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("requested WAL segment for LSN {from:X} has already been removed"),
            ));
        };
        let (start, path) = &segs[i];
        let limit = segs.get(i + 1).map_or(upto, |(next, _)| (*next).min(upto));
        let want = (limit.saturating_sub(from) as usize).min(max);
        let mut file = File::open(path)?;
        io::Seek::seek(&mut file, io::SeekFrom::Start(from - start))?;
        let mut out = vec![0; want];
        let mut got = 0;
        while got < want {
            match file.read(&mut out[got..])? {
                0 => break,
                n => got += n,
            }
        }
        out.truncate(got);
        Ok(out)
    }

    /// A receiver of the durable end (or the error that broke the log):
    /// WAL senders wait on it for more to send.
    pub fn watch_durable(&self) -> watch::Receiver<Result<Lsn, LogError>> {
        self.durable.subscribe()
    }

    /// The first LSN still on disk (the start of the oldest segment).
    pub fn oldest_lsn(&self) -> io::Result<Lsn> {
        Ok(segments(&self.dir)?.first().map_or_else(|| self.insert_lsn(), |(start, _)| *start))
    }

    fn switch_segment(&self, a: &mut Appender) -> io::Result<()> {
        if self.fsync {
            a.file.sync_data()?;
        }
        let path = self.dir.join(segment_name(a.next));
        let mut file = OpenOptions::new().create(true).write(true).truncate(true).open(&path)?;
        if self.fsync {
            zero_fill(&mut file, 0, self.segment_size)?;
            io::Seek::seek(&mut file, io::SeekFrom::Start(0))?;
        }
        sync_dir(&self.dir)?;
        a.file = Arc::new(file);
        a.segment_start = a.next;
        Ok(())
    }

    fn break_log(&self, a: &mut Appender, err: LogError) -> LogError {
        a.broken = Some(err.clone());
        let _ = self.durable.send_replace(Err(err.clone()));
        err
    }

    /// Waits until everything up to `lsn` is durable (group commit: one
    /// fsync covers every record written before it starts; LOG-ORDER:
    /// durable up to `lsn` means every earlier record too).
    pub async fn flush(&self, lsn: Lsn) -> Result<(), LogError> {
        self.flush_as(lsn, false).await
    }

    /// [`Log::flush`], where `sync_here` lets the caller do the sync
    /// itself, on its own thread, when it is not durable yet and no other
    /// caller is syncing (SYNC-HERE): as a PostgreSQL backend syncs its own
    /// commit. It saves the two thread hand-offs, to the flusher and back,
    /// that cost a lone committer about a sixth of its rate on this
    /// project's 2-core machines (docs/results/schema-bench.md). The caller
    /// says so only when its thread has nothing else to do meanwhile (the
    /// server: its worker serves no other connection); elsewhere the
    /// flusher syncs, and commits on other threads go on computing.
    pub async fn flush_as(&self, lsn: Lsn, sync_here: bool) -> Result<(), LogError> {
        // Relaxed (this swap, and the store below that another caller's
        // swap pairs with): the flag only keeps two callers from syncing
        // side by side; nothing is published through it (the durable end
        // is, through the watch channel). A lost race costs a redundant
        // sync, never a wrong answer.
        if sync_here
            && self.fsync
            && !self.durable_at(lsn)
            && !self.syncing.swap(true, std::sync::atomic::Ordering::Relaxed)
        {
            // Acquire: pairs with the Release store in `flusher` at
            // shutdown: after it, no sync counts.
            let result = if self.closed.load(std::sync::atomic::Ordering::Acquire) {
                Err(LogError::ShuttingDown)
            } else {
                self.sync_once()
            };
            self.syncing.store(false, std::sync::atomic::Ordering::Relaxed);
            result?;
        }
        let mut rx = self.durable.subscribe();
        if !self.publish_written() {
            let mut f = self.flush.lock().expect("log flush state poisoned");
            if f.requested < lsn {
                f.requested = lsn;
                self.wake.notify_one();
            }
        }
        loop {
            match &*rx.borrow_and_update() {
                Ok(durable) if *durable >= lsn => return Ok(()),
                Ok(_) => {}
                Err(e) => return Err(e.clone()),
            }
            // Acquire: pairs with the Release store in `flusher`; the last
            // durable LSN was published before it.
            if self.closed.load(std::sync::atomic::Ordering::Acquire) {
                return Err(LogError::ShuttingDown);
            }
            if rx.changed().await.is_err() {
                return Err(LogError::Closed);
            }
        }
    }

    /// Asks for everything appended so far to become durable, without
    /// waiting (synchronous_commit = off: the loss window is one flusher
    /// cycle).
    pub fn flush_soon(&self, lsn: Lsn) {
        if self.publish_written() {
            return;
        }
        let mut f = self.flush.lock().expect("log flush state poisoned");
        if f.requested < lsn {
            f.requested = lsn;
            self.wake.notify_one();
        }
    }

    /// With fsync off, "durable" means written to the page cache, which
    /// every append already is by the time it returns: publishes the end
    /// of what was appended as durable here, rather than waking the flusher
    /// thread to do the same at the cost of a thread wake-up per commit.
    /// False (and nothing published) with fsync on, or while a fault is
    /// injected or the log is broken: then the flusher decides.
    fn publish_written(&self) -> bool {
        if self.fsync {
            return false;
        }
        let upto = {
            let a = self.appender();
            if a.fault.is_some() || a.broken.is_some() {
                return false;
            }
            a.next
        };
        // Only forward, as the flusher moves it; waiters are woken only
        // when it moved.
        self.durable.send_if_modified(|d| match d {
            Ok(v) if *v < upto => {
                *v = upto;
                true
            }
            _ => false,
        });
        true
    }

    /// Whether everything up to `lsn` is durable already.
    fn durable_at(&self, lsn: Lsn) -> bool {
        matches!(&*self.durable.borrow(), Ok(d) if *d >= lsn)
    }

    /// Syncs what was appended so far and publishes it as durable; a
    /// failure breaks the log (never retried: see the module
    /// documentation). With fsync off, only publishes.
    fn sync_once(&self) -> Result<(), LogError> {
        let (file, upto, fault) = {
            let a = self.appender();
            if let Some(e) = &a.broken {
                return Err(e.clone());
            }
            (Arc::clone(&a.file), a.next, a.fault)
        };
        let result = if fault == Some(Fault::FsyncIo) {
            Err(io::Error::from_raw_os_error(5))
        } else if self.fsync {
            file.sync_data()
        } else {
            Ok(())
        };
        match result {
            Ok(()) => {
                self.durable.send_if_modified(|d| match d {
                    Ok(v) if *v < upto => {
                        *v = upto;
                        true
                    }
                    _ => false,
                });
                Ok(())
            }
            Err(e) => {
                let err = io_error("could not fsync the write-ahead log", &e);
                let mut a = self.appender();
                Err(self.break_log(&mut a, err))
            }
        }
    }

    /// The durable end of the log, or the error that broke it.
    pub fn durable(&self) -> Result<Lsn, LogError> {
        self.durable.borrow().clone()
    }

    /// The error that broke the log, if any.
    pub fn broken(&self) -> Option<LogError> {
        self.appender().broken.clone()
    }

    fn flusher(&self) {
        loop {
            let mut last_round = false;
            {
                let mut f = self.flush.lock().expect("log flush state poisoned");
                loop {
                    if f.shutdown {
                        // One more sync covers everything appended so far.
                        last_round = true;
                        break;
                    }
                    let durable = match &*self.durable.borrow() {
                        Ok(d) => *d,
                        Err(_) => return,
                    };
                    if f.requested > durable {
                        break;
                    }
                    f = self.wake.wait(f).expect("log flush state poisoned");
                }
            }
            // Everything appended before this point is covered by the sync.
            if self.sync_once().is_err() {
                return;
            }
            if last_round {
                // Release: pairs with the Acquire loads in `flush_as` and
                // `append`; the final durable LSN is published.
                self.closed.store(true, std::sync::atomic::Ordering::Release);
                self.durable.send_modify(|_| {});
                return;
            }
        }
    }

    /// Makes the next write or fsync fail (tests of the failure paths).
    pub fn inject_fault(&self, fault: Fault) {
        self.appender().fault = Some(fault);
    }

    /// Removes segments that end at or before `lsn` (after a checkpoint
    /// whose redo point is `lsn`).
    pub fn remove_before(&self, lsn: Lsn) -> io::Result<usize> {
        let segs = segments(&self.dir)?;
        let mut removed = 0;
        for w in segs.windows(2) {
            let (_, path) = &w[0];
            let (next_start, _) = &w[1];
            if *next_start <= lsn {
                fs::remove_file(path)?;
                removed += 1;
            }
        }
        if removed > 0 {
            sync_dir(&self.dir)?;
        }
        Ok(removed)
    }

    /// Bytes appended since `lsn`.
    pub fn bytes_since(&self, lsn: Lsn) -> u64 {
        self.insert_lsn().saturating_sub(lsn)
    }

    /// Stops the flusher thread after a last sync of everything appended;
    /// later appends and unfinished waits get 57P01.
    pub fn shutdown(&self) {
        let mut f = self.flush.lock().expect("log flush state poisoned");
        f.shutdown = true;
        self.wake.notify_all();
    }
}

#[cfg(all(test, not(loom)))]
#[path = "log_tests.rs"]
mod tests;
