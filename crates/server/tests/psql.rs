//! psql's `\d` family against a server with a known schema: what it prints
//! must be what PostgreSQL 15 prints for the same schema.
//! `tests/psql/expected.out` was recorded from PostgreSQL 15.18 initialised
//! with `--locale=C -E UTF8` (the collation snapscale sorts text by, which
//! `\l` shows): `schema.sql`, then each command of `commands.txt` run as
//! `psql -X -c`. Skipped, with a message, where psql is not installed.

mod wire;

use std::process::Command;

fn psql(port: u16, args: &[&str]) -> String {
    let out = Command::new("psql")
        .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-U", "postgres", "-X"])
        .args(args)
        .env_remove("PGSERVICE")
        .env_remove("PSQLRC")
        .output()
        .expect("psql runs");
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

#[tokio::test]
async fn describe_commands_print_what_postgresql_prints() {
    if Command::new("psql").arg("--version").output().is_err() {
        eprintln!("skipping: psql is not installed (postgresql-client)");
        return;
    }
    let server = wire::start(|_| {}).await;
    let port = server.addr.port();
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/psql");
    let setup = tokio::task::spawn_blocking(move || {
        psql(port, &["-q", "-v", "ON_ERROR_STOP=1", "-f", &format!("{dir}/schema.sql")])
    })
    .await
    .unwrap();
    assert_eq!(setup.trim(), "", "the schema loads");
    let commands = std::fs::read_to_string(format!("{dir}/commands.txt")).unwrap();
    let expected = std::fs::read_to_string(format!("{dir}/expected.out")).unwrap();
    let got = tokio::task::spawn_blocking(move || {
        commands
            .lines()
            .filter(|c| !c.trim().is_empty())
            .map(|c| format!("=== {c}\n{}", psql(port, &["-c", c])))
            .collect::<Vec<_>>()
            .join("\n")
    })
    .await
    .unwrap();
    if got != expected {
        let diff: Vec<String> = expected
            .lines()
            .zip(got.lines())
            .enumerate()
            .filter(|(_, (e, g))| e != g)
            .take(10)
            .map(|(i, (e, g))| format!("line {}:\n  PostgreSQL: {e}\n  snapscale:  {g}", i + 1))
            .collect();
        panic!("psql output differs from PostgreSQL 15's:\n{}\n\nwhole output:\n{got}", diff.join("\n"));
    }
}
