//! The server's allocator settings (`snapscale_server::malloc`): a large
//! buffer, once freed, leaves the resident set. Alone in its file (its own
//! process), so no other test's allocations move the resident set it
//! measures.

/// Resident set of this process, in bytes (`/proc/self/statm`'s second
/// field, in pages of 4 KiB on the machines this runs on).
fn resident_bytes() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm");
    let pages: usize = statm.split_whitespace().nth(1).and_then(|p| p.parse().ok()).expect("resident pages");
    pages * 4096
}

/// A buffer of `bytes`, every page written (so it is resident), then freed.
fn use_and_free(bytes: usize) {
    let buffer = vec![1u8; bytes];
    std::hint::black_box(&buffer);
}

/// Without the settings, glibc raises its mmap threshold to the size of
/// the first large buffer freed (up to 32 MiB) and its trim threshold to
/// twice that: every later buffer of that size comes from an arena, and
/// the arena keeps its pages after the free. Under the endurance load
/// those were the checkpoint image's and whole-table scans' buffers, and
/// the resident set grew by a few MiB a minute while the heap in use
/// stayed flat (docs/results/endurance.md).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn a_freed_large_buffer_leaves_the_resident_set() {
    snapscale_server::malloc::configure();
    const BUFFER: usize = 16 << 20;
    // The first one is where glibc would raise its thresholds.
    use_and_free(BUFFER);
    let before = resident_bytes();
    for _ in 0..4 {
        use_and_free(BUFFER);
    }
    let kept = resident_bytes().saturating_sub(before);
    assert!(kept < BUFFER / 4, "{} KiB stayed resident after freeing 16 MiB buffers", kept >> 10);
}
