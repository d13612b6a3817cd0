//! The server's allocator settings (`snapscale_server::malloc`): memory
//! one thread allocated and another freed is reused by a third. Alone in
//! its file (its own process), so no other test's allocations move the
//! resident set it measures, and without the test harness (`harness =
//! false`): glibc fixes its arena limit when a thread first needs an
//! arena of its own, and the harness's test thread would be that thread,
//! before the settings; the server sets them before its threads start.

/// Resident set of this process, in bytes (`/proc/self/statm`'s second
/// field, in pages of 4 KiB on the machines this runs on).
fn resident_bytes() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm");
    let pages: usize = statm.split_whitespace().nth(1).and_then(|p| p.parse().ok()).expect("resident pages");
    pages * 4096
}

/// `bytes` in row-sized allocations, every byte written, made on a
/// thread of their own that stays alive until `hold` ends (an exited
/// thread's arena passes to the next new thread; worker threads live on).
// Boxed: each row its own allocation, as the server's row versions are.
#[allow(clippy::vec_box)]
fn rows_on_a_live_thread<'s>(
    scope: &'s std::thread::Scope<'s, '_>,
    bytes: usize,
    hold: std::sync::mpsc::Receiver<()>,
) -> Vec<Box<[u8; 200]>> {
    let (send, rows) = std::sync::mpsc::channel();
    scope.spawn(move || {
        let made: Vec<_> = (0..bytes / 200).map(|i| Box::new([i as u8; 200])).collect();
        send.send(made).expect("test thread");
        let _ = hold.recv();
    });
    rows.recv().expect("allocating thread")
}

/// The endurance load's pattern: rows loaded on one worker thread, freed
/// by vacuum on another, their replacements allocated on a third. With
/// an arena per thread the third thread's arena grows by all of it while
/// the first one's holes stay resident (docs/results/endurance.md).
fn rows_freed_by_one_thread_are_reused_by_another() {
    snapscale_server::malloc::configure();
    const LOADED: usize = 128 << 20;
    let (grown, _) = std::thread::scope(|scope| {
        let (end_loader, hold_loader) = std::sync::mpsc::channel::<()>();
        let (end_other, hold_other) = std::sync::mpsc::channel::<()>();
        let loaded = rows_on_a_live_thread(scope, LOADED, hold_loader);
        // Every other row dies: holes between live rows, which no trim
        // returns, as vacuum leaves them.
        let kept: Vec<_> = loaded.into_iter().step_by(2).collect();
        let before = resident_bytes();
        let replacements = rows_on_a_live_thread(scope, LOADED / 2, hold_other);
        let grown = resident_bytes().saturating_sub(before);
        drop((end_loader, end_other, replacements));
        (grown, kept.len())
    });
    assert!(grown < LOADED / 8, "{} MiB more resident for rows that replaced freed ones", grown >> 20);
}

fn main() {
    if cfg!(all(target_os = "linux", target_env = "gnu")) {
        rows_freed_by_one_thread_are_reused_by_another();
        println!("test rows_freed_by_one_thread_are_reused_by_another ... ok");
    }
}
