//! Checkpoint files and the control file that names the latest one.
//!
//! ```text
//!   checkpoint-<redo LSN, 16 hex>:
//!     0  8 bytes  magic "SNAPCKP1"
//!     8  u64 LE   redo LSN: replay starts here
//!    16  u64 LE   payload length
//!    24  u32 LE   CRC-32C of the payload
//!    28  ...      payload (the SQL layer's image of the catalog and tables)
//!
//!   control:
//!     0  8 bytes  magic "SNAPCTL1"
//!     8  u64 LE   redo LSN of the latest complete checkpoint
//!    16  u32 LE   CRC-32C of bytes 0..16
//! ```
//!
//! Each file is written under a temporary name, fsync'ed, renamed, and the
//! directory fsync'ed, so a crash leaves either the old or the new file,
//! never a mix. The checkpoint is complete before the control file names
//! it; older checkpoints are removed only after that. A control file that
//! names a missing or corrupt checkpoint stops the start-up: serving a
//! database without the data it had would be worse than not starting.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::Path;

use crate::log::Lsn;

const CHECKPOINT_MAGIC: &[u8; 8] = b"SNAPCKP1";
const CONTROL_MAGIC: &[u8; 8] = b"SNAPCTL1";

fn checkpoint_name(redo: Lsn) -> String {
    format!("checkpoint-{redo:016X}")
}

/// Writes `parts`, one after the other, as the file `name` in `dir`, so
/// that a crash leaves the old file or the new one (see the module docs).
fn write_atomically(dir: &Path, name: &str, parts: &[&[u8]]) -> io::Result<()> {
    let tmp = dir.join(format!("{name}.tmp"));
    let mut f = File::create(&tmp)?;
    for part in parts {
        f.write_all(part)?;
    }
    f.sync_all()?;
    drop(f);
    fs::rename(&tmp, dir.join(name))?;
    File::open(dir)?.sync_all()
}

/// The 28 bytes before a checkpoint's payload.
fn header(redo: Lsn, payload: &[u8]) -> [u8; 28] {
    let mut header = [0u8; 28];
    header[..8].copy_from_slice(CHECKPOINT_MAGIC);
    header[8..16].copy_from_slice(&redo.to_le_bytes());
    header[16..24].copy_from_slice(&(payload.len() as u64).to_le_bytes());
    header[24..].copy_from_slice(&crc32c::crc32c(payload).to_le_bytes());
    header
}

/// A checkpoint file's bytes for `payload` at `redo` (what a base backup
/// sends, and [`install`] takes).
pub fn file_bytes(redo: Lsn, payload: &[u8]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(payload.len() + 28);
    bytes.extend_from_slice(&header(redo, payload));
    bytes.extend_from_slice(payload);
    bytes
}

/// Checks a checkpoint file's bytes: its redo point and payload, or `None`
/// if it is corrupt.
fn decode(bytes: &[u8]) -> Option<(Lsn, &[u8])> {
    if bytes.len() < 28 || &bytes[..8] != CHECKPOINT_MAGIC {
        return None;
    }
    let redo = Lsn::from_le_bytes(bytes[8..16].try_into().expect("8 bytes"));
    let len = u64::from_le_bytes(bytes[16..24].try_into().expect("8 bytes")) as usize;
    let crc = u32::from_le_bytes(bytes[24..28].try_into().expect("4 bytes"));
    if bytes.len() != 28usize.saturating_add(len) || crc32c::crc32c(&bytes[28..]) != crc {
        return None;
    }
    Some((redo, &bytes[28..]))
}

/// Writes a checkpoint with redo point `redo`, makes it the latest, and
/// removes older ones. The payload is written after its header, never
/// copied behind it: it is the size of the database. Callers serialize
/// checkpoints: two writers would race on the temporary name and the
/// control file.
pub fn write(dir: &Path, redo: Lsn, payload: &[u8]) -> io::Result<()> {
    install_parts(dir, redo, &[&header(redo, payload), payload])
}

fn install_parts(dir: &Path, redo: Lsn, parts: &[&[u8]]) -> io::Result<()> {
    let name = checkpoint_name(redo);
    write_atomically(dir, &name, parts)?;
    let mut control = Vec::with_capacity(20);
    control.extend_from_slice(CONTROL_MAGIC);
    control.extend_from_slice(&redo.to_le_bytes());
    let crc = crc32c::crc32c(&control);
    control.extend_from_slice(&crc.to_le_bytes());
    write_atomically(dir, "control", &[&control])?;
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        let Some(file) = path.file_name().and_then(|n| n.to_str()) else { continue };
        if file.starts_with("checkpoint-") && file != name {
            fs::remove_file(&path)?;
        }
    }
    Ok(())
}

/// Installs a checkpoint file received from elsewhere (a standby's base
/// backup), byte for byte, as the latest; returns its redo point. Corrupt
/// bytes are refused.
pub fn install(dir: &Path, bytes: &[u8]) -> Result<Lsn, String> {
    let (redo, _) = decode(bytes).ok_or_else(|| "the received checkpoint is corrupt".to_owned())?;
    install_parts(dir, redo, &[bytes])
        .map_err(|e| format!("could not write the received checkpoint: {e}"))?;
    Ok(redo)
}

/// The latest checkpoint: `Ok(None)` for a data directory that never had
/// one, an error naming the problem if the control file or the checkpoint
/// it names is missing or corrupt.
pub fn read_latest(dir: &Path) -> Result<Option<(Lsn, Vec<u8>)>, String> {
    let control_path = dir.join("control");
    let control = match fs::read(&control_path) {
        Ok(c) => c,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("could not read \"{}\": {e}", control_path.display())),
    };
    if control.len() != 20
        || &control[..8] != CONTROL_MAGIC
        || crc32c::crc32c(&control[..16]).to_le_bytes() != control[16..20]
    {
        return Err(format!("control file \"{}\" is corrupt", control_path.display()));
    }
    let redo = Lsn::from_le_bytes(control[8..16].try_into().expect("8 bytes"));
    let path = dir.join(checkpoint_name(redo));
    let mut bytes = fs::read(&path)
        .map_err(|e| format!("the latest checkpoint \"{}\" cannot be read: {e}", path.display()))?;
    if !matches!(decode(&bytes), Some((stored, _)) if stored == redo) {
        return Err(format!("the latest checkpoint \"{}\" is corrupt", path.display()));
    }
    // The payload in place: it is the size of the database.
    bytes.drain(..28);
    Ok(Some((redo, bytes)))
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    #[cfg_attr(miri, ignore = "file I/O")]
    fn latest_checkpoint_wins_and_corruption_is_refused() {
        let d = std::env::temp_dir().join(format!("snapscale-ckpt-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        assert_eq!(read_latest(&d).unwrap(), None);
        write(&d, 10, b"first").unwrap();
        write(&d, 99, b"second").unwrap();
        assert_eq!(read_latest(&d).unwrap(), Some((99, b"second".to_vec())));
        assert!(!d.join(checkpoint_name(10)).exists(), "older checkpoints are removed");
        // What a base backup sends installs as the same checkpoint.
        assert_eq!(install(&d, &file_bytes(120, b"third")), Ok(120));
        assert_eq!(read_latest(&d).unwrap(), Some((120, b"third".to_vec())));
        assert!(install(&d, &file_bytes(130, b"fourth")[..20]).is_err());
        write(&d, 99, b"second").unwrap();
        let path = d.join(checkpoint_name(99));
        let mut bytes = fs::read(&path).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        fs::write(&path, bytes).unwrap();
        assert!(read_latest(&d).unwrap_err().contains("corrupt"));
        fs::remove_file(&path).unwrap();
        assert!(read_latest(&d).unwrap_err().contains("cannot be read"));
        let _ = fs::remove_dir_all(&d);
    }
}
