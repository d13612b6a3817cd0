//! The log's unit tests (kept apart to keep log.rs short).

use super::*;

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("snapscale-log-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    d
}

#[tokio::test]
#[cfg_attr(miri, ignore = "file I/O and threads")]
async fn records_round_trip_across_segments_and_a_torn_tail_is_cut() {
    let d = dir("roundtrip");
    let log = Log::open(&d, 0, 256, true).unwrap();
    let mut ends = Vec::new();
    for i in 0..40u8 {
        let payload = vec![i; i as usize];
        ends.push(log.append(&[(i, &payload), (7, b"x")]).unwrap());
    }
    log.flush(*ends.last().unwrap()).await.unwrap();
    assert!(segments(&d).unwrap().len() > 3, "the log spans segments");
    let read1 = read(&d, 0).unwrap();
    assert_eq!(read1.records.len(), 80);
    assert_eq!(read1.end, *ends.last().unwrap());
    assert!(read1.stopped.is_none());
    assert_eq!(read1.records[2], Record { lsn: read1.records[2].lsn, kind: 1, payload: vec![1] });
    // Reading from a later LSN starts there.
    let from = read1.records[50].lsn;
    assert_eq!(read(&d, from).unwrap().records.len(), 30);
    log.shutdown();
    // Tear the last record: recovery stops before it, and appending
    // resumes at that point.
    let segs = segments(&d).unwrap();
    let (start, last) = segs.last().unwrap();
    let record = read1.records.last().unwrap();
    assert!(*start <= record.lsn, "the last record is in the last segment");
    let torn = record.lsn - start + (HEADER + record.payload.len()) as u64 - 1;
    OpenOptions::new().write(true).open(last).unwrap().set_len(torn).unwrap();
    let read2 = read(&d, 0).unwrap();
    assert_eq!(read2.records.len(), 79);
    assert!(read2.stopped.is_some() && read2.torn_tail);
    let log = Log::open(&d, read2.end, 256, true).unwrap();
    let end = log.append(&[(9, b"after")]).unwrap();
    log.flush(end).await.unwrap();
    let read3 = read(&d, 0).unwrap();
    assert_eq!(read3.records.len(), 80);
    assert_eq!(read3.records.last().unwrap().payload, b"after");
    assert!(read3.stopped.is_none());
    // A flipped byte is a checksum mismatch: reading stops there.
    let (_, first) = segments(&d).unwrap().remove(0);
    let mut bytes = fs::read(&first).unwrap();
    bytes[8] ^= 0xff;
    fs::write(&first, bytes).unwrap();
    let damaged = read(&d, 0).unwrap();
    assert!(damaged.stopped.unwrap().contains("checksum"));
    assert!(!damaged.torn_tail, "damage before the last segment is not a torn tail");
    log.shutdown();
    // Segments before a redo point go away.
    let log = Log::open(&d, read3.end, 256, true).unwrap();
    let removed = log.remove_before(read3.records[60].lsn).unwrap();
    assert!(removed > 0);
    log.shutdown();
    let _ = fs::remove_dir_all(&d);
}

/// With fsync on, every segment is zero-filled to the segment size before
/// records go into it; the zeros read as the end of the log, not as a torn
/// tail, and a reopened log writes over them.
#[tokio::test]
#[cfg_attr(miri, ignore = "file I/O and threads")]
async fn segments_are_zero_filled_and_the_zeros_end_the_log() {
    let d = dir("zeroed");
    let log = Log::open(&d, 0, 4096, true).unwrap();
    let end = log.append(&[(1, b"one"), (2, b"two")]).unwrap();
    log.flush(end).await.unwrap();
    let (_, path) = segments(&d).unwrap().pop().unwrap();
    assert_eq!(fs::metadata(&path).unwrap().len(), 4096, "the segment is filled ahead");
    let read1 = read(&d, 0).unwrap();
    assert_eq!((read1.records.len(), read1.end), (2, end));
    assert!(read1.stopped.is_none() && !read1.torn_tail, "{:?}", read1.stopped);
    // A crash (no shutdown) and a reopen at the end: the next records
    // overwrite the zeros, and still read to the end.
    drop(log);
    let log = Log::open(&d, read1.end, 4096, true).unwrap();
    let mut last = end;
    for i in 0..200u8 {
        last = log.append(&[(i, &[i; 40])]).unwrap();
    }
    log.flush(last).await.unwrap();
    let segs = segments(&d).unwrap();
    assert!(segs.len() > 1, "the log moved on to a new segment");
    assert_eq!(fs::metadata(&segs.last().unwrap().1).unwrap().len(), 4096);
    let read2 = read(&d, 0).unwrap();
    assert_eq!((read2.records.len(), read2.end), (202, last));
    assert!(read2.stopped.is_none(), "{:?}", read2.stopped);
    // Zeros before the end of a finished segment are damage, as before.
    let (_, first) = segs[0].clone();
    let mut bytes = fs::read(&first).unwrap();
    let half = bytes.len() / 2;
    bytes[half..].fill(0);
    fs::write(&first, bytes).unwrap();
    let damaged = read(&d, 0).unwrap();
    assert!(damaged.stopped.is_some() && !damaged.torn_tail, "{:?}", damaged.stopped);
    log.shutdown();
    // Without fsync nothing is filled ahead.
    let d2 = dir("unzeroed");
    let log = Log::open(&d2, 0, 4096, false).unwrap();
    let end = log.append(&[(1, b"one")]).unwrap();
    log.flush(end).await.unwrap();
    assert_eq!(fs::metadata(&segments(&d2).unwrap()[0].1).unwrap().len(), end);
    log.shutdown();
    let _ = fs::remove_dir_all(&d);
    let _ = fs::remove_dir_all(&d2);
}

/// SYNC-HERE: committers that sync on their own threads, beside others
/// that hand the sync to the flusher, across segment switches: every
/// flush returns only once its record is durable, and every record reads
/// back. An injected fsync failure reaches a committer syncing itself as
/// it reaches the flusher's waiters, and breaks the log for everyone.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[cfg_attr(miri, ignore = "file I/O and threads")]
async fn committers_syncing_their_own_commits_keep_the_log_order() {
    let d = dir("synchere");
    let log = Log::open(&d, 0, 2048, true).unwrap();
    let mut tasks = Vec::new();
    for i in 0..8u8 {
        let log = Arc::clone(&log);
        tasks.push(tokio::spawn(async move {
            let mut ends = Vec::new();
            for j in 0..50u8 {
                let end = log.append(&[(1, &[i ^ j; 30])]).unwrap();
                log.flush_as(end, i % 2 == 0).await.unwrap();
                assert!(log.durable().unwrap() >= end, "a flush returned before its record was durable");
                ends.push(end);
            }
            ends
        }));
    }
    let mut last = 0;
    for t in tasks {
        last = last.max(*t.await.unwrap().last().unwrap());
    }
    assert!(segments(&d).unwrap().len() > 2, "the syncs crossed segment switches");
    let back = read(&d, 0).unwrap();
    assert_eq!((back.records.len(), back.end), (400, last));
    assert!(back.stopped.is_none(), "{:?}", back.stopped);
    log.inject_fault(Fault::FsyncIo);
    let end = log.append(&[(1, b"doomed")]).unwrap();
    let err = log.flush_as(end, true).await.unwrap_err();
    assert!(err.to_string().contains("fsync"), "{err}");
    assert!(log.append(&[(1, b"after")]).is_err(), "the log is broken for everyone");
    let _ = fs::remove_dir_all(&d);
}

#[tokio::test]
#[cfg_attr(miri, ignore = "file I/O and threads")]
async fn concurrent_flushes_share_fsyncs() {
    let d = dir("group");
    let log = Log::open(&d, 0, 1 << 20, true).unwrap();
    let mut tasks = Vec::new();
    for i in 0..32u8 {
        let log = Arc::clone(&log);
        tasks.push(tokio::spawn(async move {
            let end = log.append(&[(1, &[i; 10])]).unwrap();
            log.flush(end).await.unwrap();
            end
        }));
    }
    for t in tasks {
        let end = t.await.unwrap();
        assert!(log.durable().unwrap() >= end);
    }
    assert_eq!(read(&d, 0).unwrap().records.len(), 32);
    log.shutdown();
    let _ = fs::remove_dir_all(&d);
}

#[tokio::test]
#[cfg_attr(miri, ignore = "file I/O and threads")]
async fn shutdown_syncs_what_was_appended_and_refuses_more() {
    let d = std::env::temp_dir().join(format!("snapscale-log-shutdown-{}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    let log = Log::open(&d, 0, 1 << 20, true).unwrap();
    // Appended, never waited for (an abort record, an asynchronous commit).
    let end = log.append(&[(1, b"unwaited")]).unwrap();
    log.shutdown();
    let mut tries = 0;
    while log.durable().unwrap() < end {
        tries += 1;
        assert!(tries < 500, "the last sync never came");
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
    }
    assert_eq!(log.append(&[(1, b"late")]).unwrap_err().sqlstate(), "57P01");
    assert_eq!(log.flush(end + 1).await.unwrap_err().sqlstate(), "57P01", "no wait forever");
    log.flush(end).await.unwrap();
    let _ = fs::remove_dir_all(&d);
}

#[tokio::test]
#[cfg_attr(miri, ignore = "file I/O and threads")]
async fn without_fsync_an_append_is_durable_as_soon_as_it_is_asked_to_be() {
    let d = dir("nosync");
    let log = Log::open(&d, 0, 1 << 20, false).unwrap();
    let first = log.append(&[(1, b"one")]).unwrap();
    let second = log.append(&[(1, b"two")]).unwrap();
    assert!(log.durable().unwrap() < first, "nothing asked yet");
    // Published by the caller itself, without waiting for the flusher:
    // everything appended so far, not only what was asked for.
    log.flush_soon(first);
    assert_eq!(log.durable().unwrap(), second);
    let third = log.append(&[(1, b"three")]).unwrap();
    log.flush(third).await.unwrap();
    assert_eq!(log.durable().unwrap(), third);
    // An injected fault goes through the flusher, which reports it.
    log.inject_fault(Fault::FsyncIo);
    let fourth = log.append(&[(1, b"four")]).unwrap();
    assert!(log.flush(fourth).await.is_err(), "a failed sync is never success");
    log.shutdown();
    let _ = fs::remove_dir_all(&d);
}

#[test]
fn lsns_print_and_parse_as_postgresql_does() {
    assert_eq!(format_lsn(0x1_0000_00A0), "1/A0");
    assert_eq!(format_lsn(0x16B3748), "0/16B3748");
    assert_eq!(parse_lsn("0/16B3748"), Some(0x16B3748));
    assert_eq!(parse_lsn("1/A0"), Some(0x1_0000_00A0));
    assert_eq!(parse_lsn("bad"), None);
    assert_eq!(parse_lsn("1/G"), None);
}
