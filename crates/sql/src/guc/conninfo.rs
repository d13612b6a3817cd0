//! libpq's keyword/value connection strings, as `primary_conninfo` holds
//! them: `host=primary port=5433 user=replicator password='s3 cret'`.

/// The parts of a connection string a WAL receiver uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conninfo {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: Option<String>,
    pub application_name: String,
}

impl Conninfo {
    /// Parses `keyword=value` pairs separated by blanks; a value may be
    /// single-quoted, with `\'` and `\\` inside. Unknown keywords are
    /// refused, as libpq refuses them.
    pub fn parse(text: &str) -> Result<Conninfo, String> {
        let mut info = Conninfo {
            host: "localhost".into(),
            port: 5432,
            user: String::new(),
            password: None,
            application_name: "walreceiver".into(),
        };
        let mut chars = text.chars().peekable();
        loop {
            while chars.peek().is_some_and(|c| c.is_whitespace()) {
                chars.next();
            }
            if chars.peek().is_none() {
                break;
            }
            let mut key = String::new();
            while let Some(&c) = chars.peek() {
                if c == '=' || c.is_whitespace() {
                    break;
                }
                key.push(c);
                chars.next();
            }
            while chars.peek().is_some_and(|c| c.is_whitespace()) {
                chars.next();
            }
            if chars.next() != Some('=') {
                return Err(format!("missing \"=\" after \"{key}\" in connection info string"));
            }
            while chars.peek().is_some_and(|c| c.is_whitespace()) {
                chars.next();
            }
            let mut value = String::new();
            if chars.peek() == Some(&'\'') {
                chars.next();
                loop {
                    match chars.next() {
                        Some('\\') => value.extend(chars.next()),
                        Some('\'') => break,
                        Some(c) => value.push(c),
                        None => return Err("unterminated quoted string in connection info string".into()),
                    }
                }
            } else {
                while let Some(&c) = chars.peek() {
                    if c.is_whitespace() {
                        break;
                    }
                    value.push(c);
                    chars.next();
                }
            }
            match key.as_str() {
                "host" | "hostaddr" => info.host = value,
                "port" => {
                    info.port = value.parse().map_err(|_| format!("invalid port number: \"{value}\""))?
                }
                "user" => info.user = value,
                "password" => info.password = Some(value),
                "application_name" => info.application_name = value,
                // Accepted and not needed: physical replication is not per
                // database, and this receiver sets its own timeouts.
                "dbname" | "connect_timeout" | "sslmode" => {}
                _ => return Err(format!("invalid connection option \"{key}\"")),
            }
        }
        if info.user.is_empty() {
            return Err("primary_conninfo must name a user".into());
        }
        Ok(info)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyword_value_pairs_parse_as_libpq_reads_them() {
        let c =
            Conninfo::parse("host=10.0.0.1 port=6543 user=rep password='a b\\'c' dbname=postgres").unwrap();
        assert_eq!((c.host.as_str(), c.port, c.user.as_str()), ("10.0.0.1", 6543, "rep"));
        assert_eq!(c.password.as_deref(), Some("a b'c"));
        assert!(Conninfo::parse("host=x user=u bogus=1").unwrap_err().contains("bogus"));
        assert!(Conninfo::parse("host=x port=abc user=u").is_err());
        assert!(Conninfo::parse("host=x").is_err(), "a user is required");
        assert!(Conninfo::parse("user=u password='open").is_err());
    }
}
