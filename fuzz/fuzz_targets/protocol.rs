//! The frontend byte stream, as libFuzzer mutates it, against one
//! in-process server; after every input the server must answer a new
//! client and hold no slot or lock of the input's connection. The input
//! format and the checks are `snapscale_server::fuzzing`'s.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use snapscale_server::fuzzing::Harness;

fn harness() -> &'static Harness {
    static HARNESS: OnceLock<Harness> = OnceLock::new();
    HARNESS.get_or_init(|| {
        Harness::start(&std::env::temp_dir().join(format!("snapscale-libfuzzer-{}", std::process::id())))
    })
}

fuzz_target!(|data: &[u8]| {
    let h = harness();
    h.feed(data);
    h.check();
});
