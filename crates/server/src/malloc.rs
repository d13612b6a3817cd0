//! How the process's allocator treats large buffers and threads.
//!
//! glibc's malloc serves a request at or above its mmap threshold with a
//! mapping of its own, returned to the system on free. The threshold
//! starts at 128 KiB but is dynamic: freeing such a mapping raises it to
//! that mapping's size (up to 32 MiB), and the trim threshold (how much
//! free memory an arena keeps at its top) to twice that. After the first
//! checkpoint freed its image, every later buffer of up to 32 MiB (a
//! checkpoint image while it grows, a whole-table scan's tids and rows, a
//! vacuum pass's version list) came from an arena instead, which kept the
//! pages after the free and, with such buffers interleaved with
//! long-lived rows, could not reuse them all: under `lab endurance` the
//! resident set grew by ~4 MiB a minute while the heap in use (heaptrack)
//! stayed flat. A fixed threshold turns the dynamic one off: large
//! buffers always get their own mapping and leave the resident set when
//! freed.
//!
//! glibc also gives threads arenas of their own (up to eight per core).
//! The rows a session loads (`pgbench -i`'s COPY) sit in its worker
//! thread's arena; when an update's old version is removed by vacuum,
//! its memory goes back to that arena, where only the threads attached
//! to it can reuse it, while the new version may have been allocated in
//! another arena, which grows. The holes lie between live rows, so no
//! trim returns them, and the resident set crept up as the load touched
//! rows for the first time (~3 MiB a minute from the 2nd to the 9th
//! minute of the endurance load with the threshold fixed and the trim;
//! ~1 MiB a minute with one arena as well). So the server runs on one
//! arena: every thread reuses every hole. Threads then share the
//! arena's lock, but most small allocations and frees go through each
//! thread's own cache (tcache) without it.

/// Requests at or above this size get a mapping of their own. Small
/// enough that the buffers above (megabytes to a hundred) are all
/// mapped; large enough that per-statement buffers of a few rows stay in
/// the arenas, without a system call each.
pub const MMAP_THRESHOLD: usize = 1 << 20;

/// Fixes glibc's mmap threshold at [`MMAP_THRESHOLD`] (and so its trim
/// threshold at the default 128 KiB) and its arenas at one, see the
/// module documentation. For the whole process: call it once at
/// start-up, before other threads start (a thread picks its arena at
/// its first allocation). Does nothing with another C library.
pub fn configure() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // glibc's malloc.h: `int mallopt(int param, int value)`.
        extern "C" {
            fn mallopt(param: i32, value: i32) -> i32;
        }
        const M_MMAP_THRESHOLD: i32 = -3;
        const M_ARENA_MAX: i32 = -8;
        // SAFETY: mallopt only changes malloc's parameters, under its own
        // lock; any thread may call it at any time.
        let done = unsafe { mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD as i32) };
        debug_assert_eq!(done, 1, "mallopt(M_MMAP_THRESHOLD) refused");
        // SAFETY: as above.
        let done = unsafe { mallopt(M_ARENA_MAX, 1) };
        debug_assert_eq!(done, 1, "mallopt(M_ARENA_MAX) refused");
    }
}

/// Returns the free pages inside glibc's arenas to the system
/// (`malloc_trim(0)`). The fixed threshold keeps large buffers out of
/// the arenas, but the arenas still hold the pages of rows and index
/// entries freed by vacuum and of statements' smaller buffers, scattered
/// between live ones where the top-of-arena trim never reaches them: the
/// server calls this after each checkpoint and every
/// [`TRIM_INTERVAL`]. Does nothing with
/// another C library.
pub fn trim() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // glibc's malloc.h: `int malloc_trim(size_t pad)`.
        extern "C" {
            fn malloc_trim(pad: usize) -> i32;
        }
        // SAFETY: malloc_trim takes each arena's lock while it releases
        // that arena's free pages; any thread may call it at any time.
        unsafe { malloc_trim(0) };
    }
}

/// How often a server trims its arenas between checkpoints ([`trim`]).
pub const TRIM_INTERVAL: std::time::Duration = std::time::Duration::from_secs(30);
