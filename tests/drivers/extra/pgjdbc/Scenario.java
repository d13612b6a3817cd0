// pgjdbc with its defaults (prepareThreshold 5), against the server named by
// PGHOST/PGPORT/PGUSER/PGDATABASE. Checked by hand, not in CI. Run with the
// source launcher: java -cp postgresql.jar Scenario.java (see ../../README.md).

import java.io.StringReader;
import java.io.StringWriter;
import java.sql.*;
import java.time.*;
import java.util.*;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyManager;
import org.postgresql.util.PSQLException;

public class Scenario {
    static final String T = "drv_pgjdbc";
    static final String COLS = "n, big, name, flag, score, day, at, at_tz";
    static int passed = 0, failed = 0;
    static Connection conn;
    static final List<Integer> ids = new ArrayList<>();

    interface Body { void run() throws Exception; }

    static void step(String title, Body body) {
        try {
            body.run();
            passed++;
            System.out.println("PASS " + title);
        } catch (Throwable e) {
            failed++;
            String code = e instanceof SQLException ? " [" + ((SQLException) e).getSQLState() + "]" : "";
            String msg = String.valueOf(e.getMessage()).split("\n")[0];
            System.out.println("FAIL " + title + ": " + e.getClass().getSimpleName() + code + ": " + msg);
            if (System.getenv("DRIVERS_VERBOSE") != null) e.printStackTrace(System.out);
            try { if (conn != null && !conn.getAutoCommit()) conn.rollback(); } catch (Exception ignored) { }
        }
        System.out.flush();
    }

    static void check(boolean cond, String what) { if (!cond) throw new AssertionError(what); }

    static void checkEq(Object got, Object want, String what) {
        if (!Objects.equals(got, want)) throw new AssertionError(what + ": got " + got + ", want " + want);
    }

    static String env(String name, String dflt) {
        String v = System.getenv(name);
        return v == null || v.isEmpty() ? dflt : v;
    }

    static Connection connect() throws SQLException {
        String url = "jdbc:postgresql://" + env("PGHOST", "localhost") + ":" + env("PGPORT", "5432") + "/"
            + env("PGDATABASE", "postgres");
        Properties p = new Properties();
        p.setProperty("user", env("PGUSER", "postgres"));
        String pw = System.getenv("PGPASSWORD");
        if (pw != null) p.setProperty("password", pw);
        return DriverManager.getConnection(url, p);
    }

    static final Object[][] ROWS = {
        {42, 9_000_000_000L, "O'Hara ✓", true, 0.1 + 0.2, LocalDate.of(2024, 2, 29),
         LocalDateTime.of(2024, 1, 2, 3, 4, 5, 678_000_000),
         OffsetDateTime.of(2024, 1, 2, 3, 4, 5, 678_000_000, ZoneOffset.ofHours(2))},
        {-7, -1L, "beta", false, -1.5e300, LocalDate.of(1999, 12, 31),
         LocalDateTime.of(1999, 12, 31, 23, 59, 59),
         OffsetDateTime.of(2000, 1, 1, 0, 0, 0, 0, ZoneOffset.UTC)},
    };

    static void bindRow(PreparedStatement ps, Object[] r) throws SQLException {
        ps.setInt(1, (Integer) r[0]);
        ps.setLong(2, (Long) r[1]);
        ps.setString(3, (String) r[2]);
        ps.setBoolean(4, (Boolean) r[3]);
        ps.setDouble(5, (Double) r[4]);
        ps.setObject(6, r[5]);
        ps.setObject(7, r[6]);
        ps.setObject(8, r[7]);
    }

    static Object[] readRow(ResultSet rs) throws SQLException {
        return new Object[] {
            rs.getInt(1), rs.getLong(2), rs.getString(3), rs.getBoolean(4), rs.getDouble(5),
            rs.getObject(6, LocalDate.class), rs.getObject(7, LocalDateTime.class),
            rs.getObject(8, OffsetDateTime.class)};
    }

    public static void main(String[] args) throws Exception {
        System.out.println("== pgjdbc " + org.postgresql.util.DriverInfo.DRIVER_VERSION + " (host="
            + env("PGHOST", "localhost") + " port=" + env("PGPORT", "5432") + ")");

        step("connect", () -> {
            conn = connect();
            try (Statement s = conn.createStatement(); ResultSet rs = s.executeQuery("SELECT 1")) {
                check(rs.next() && rs.getInt(1) == 1, "SELECT 1");
            }
        });

        step("create table (DROP IF EXISTS, SERIAL key, eight column types); DatabaseMetaData sees it", () -> {
            try (Statement s = conn.createStatement()) {
                s.execute("DROP TABLE IF EXISTS " + T);
                s.execute("CREATE TABLE " + T + " (id serial PRIMARY KEY, n integer, big bigint, "
                    + "name text UNIQUE, flag boolean, score double precision, day date, "
                    + "at timestamp, at_tz timestamptz)");
            }
            DatabaseMetaData md = conn.getMetaData();
            try (ResultSet rs = md.getTables(null, null, T, new String[] {"TABLE"})) {
                check(rs.next(), "getTables does not list the table");
                checkEq(rs.getString("TABLE_NAME"), T, "TABLE_NAME");
            }
            List<String> cols = new ArrayList<>();
            try (ResultSet rs = md.getColumns(null, null, T, null)) {
                while (rs.next()) cols.add(rs.getString("COLUMN_NAME") + ":" + rs.getString("TYPE_NAME"));
            }
            checkEq(cols, List.of("id:serial", "n:int4", "big:int8", "name:text", "flag:bool",
                "score:float8", "day:date", "at:timestamp", "at_tz:timestamptz"), "getColumns");
            try (ResultSet rs = md.getPrimaryKeys(null, null, T)) {
                check(rs.next(), "getPrimaryKeys is empty");
                checkEq(rs.getString("COLUMN_NAME"), "id", "primary key column");
            }
        });

        step("insert with parameters of every type (java.time), generated keys; batch", () -> {
            try (PreparedStatement ps = conn.prepareStatement(
                    "INSERT INTO " + T + " (" + COLS + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?)", new String[] {"id"})) {
                for (Object[] r : ROWS) {
                    bindRow(ps, r);
                    checkEq(ps.executeUpdate(), 1, "update count");
                    try (ResultSet keys = ps.getGeneratedKeys()) {
                        check(keys.next(), "no generated key");
                        ids.add(keys.getInt(1));
                    }
                }
            }
            try (PreparedStatement ps = conn.prepareStatement("INSERT INTO " + T + " (n, name, day) VALUES (?, ?, ?)")) {
                for (int i = 1; i <= 3; i++) {
                    ps.setInt(1, i);
                    ps.setString(2, "many" + i);
                    ps.setObject(3, LocalDate.of(2020, 1, i));
                    ps.addBatch();
                }
                checkEq(ps.executeBatch().length, 3, "batch counts");
            }
        });

        step("select with parameters, values round-trip", () -> {
            try (PreparedStatement ps = conn.prepareStatement("SELECT " + COLS + " FROM " + T + " WHERE id = ?")) {
                for (int k = 0; k < ids.size(); k++) {
                    ps.setInt(1, ids.get(k));
                    try (ResultSet rs = ps.executeQuery()) {
                        check(rs.next(), "row missing");
                        Object[] got = readRow(rs);
                        Object[] want = ROWS[k].clone();
                        // timestamptz comes back in UTC: compare instants
                        check(((OffsetDateTime) got[7]).isEqual((OffsetDateTime) want[7]), "at_tz " + got[7]);
                        got[7] = want[7];
                        checkEq(Arrays.asList(got), Arrays.asList(want), "row " + ids.get(k));
                    }
                }
            }
            try (PreparedStatement ps = conn.prepareStatement(
                    "SELECT count(*) FROM " + T + " WHERE day >= ? AND flag = ? AND at < ? AND at_tz > ?")) {
                ps.setObject(1, LocalDate.of(2024, 1, 1));
                ps.setBoolean(2, true);
                ps.setObject(3, LocalDateTime.of(2025, 1, 1, 0, 0));
                ps.setObject(4, OffsetDateTime.of(2023, 12, 31, 0, 0, 0, 0, ZoneOffset.UTC));
                try (ResultSet rs = ps.executeQuery()) {
                    check(rs.next(), "no count");
                    checkEq(rs.getLong(1), 1L, "filtered count");
                }
            }
        });

        step("update with parameters", () -> {
            OffsetDateTime newTz = OffsetDateTime.of(2030, 6, 1, 12, 0, 0, 0, ZoneOffset.UTC);
            try (PreparedStatement ps = conn.prepareStatement(
                    "UPDATE " + T + " SET score = ?, at_tz = ?, big = big + ? WHERE name = ?")) {
                ps.setDouble(1, 2.5);
                ps.setObject(2, newTz);
                ps.setLong(3, 1);
                ps.setString(4, "beta");
                checkEq(ps.executeUpdate(), 1, "update count");
            }
            try (PreparedStatement ps = conn.prepareStatement("SELECT score, at_tz, big FROM " + T + " WHERE name = ?")) {
                ps.setString(1, "beta");
                try (ResultSet rs = ps.executeQuery()) {
                    check(rs.next(), "row missing");
                    checkEq(rs.getDouble(1), 2.5, "score");
                    check(rs.getObject(2, OffsetDateTime.class).isEqual(newTz), "at_tz");
                    checkEq(rs.getLong(3), 0L, "big");
                }
            }
        });

        step("delete with parameters", () -> {
            try (PreparedStatement ps = conn.prepareStatement("DELETE FROM " + T + " WHERE name LIKE ?")) {
                ps.setString(1, "many%");
                checkEq(ps.executeUpdate(), 3, "update count");
            }
        });

        step("transaction rolled back; savepoint rolled back inside a committed one", () -> {
            conn.setAutoCommit(false);
            try (PreparedStatement ps = conn.prepareStatement("INSERT INTO " + T + " (name) VALUES (?)")) {
                ps.setString(1, "gone");
                ps.executeUpdate();
                conn.rollback();
                ps.setString(1, "kept");
                ps.executeUpdate();
                Savepoint sp = conn.setSavepoint();
                ps.setString(1, "undone");
                ps.executeUpdate();
                conn.rollback(sp);
                conn.commit();
            } finally {
                conn.setAutoCommit(true);
            }
            Set<String> names = new HashSet<>();
            try (Statement s = conn.createStatement(); ResultSet rs = s.executeQuery("SELECT name FROM " + T)) {
                while (rs.next()) names.add(rs.getString(1));
            }
            check(!names.contains("gone") && !names.contains("undone"), "rolled back rows visible: " + names);
            check(names.contains("kept"), "committed row missing");
        });

        step("unique violation caught, constraint name reported", () -> {
            try (PreparedStatement ps = conn.prepareStatement("INSERT INTO " + T + " (name) VALUES (?)")) {
                ps.setString(1, "beta");
                ps.executeUpdate();
                throw new AssertionError("no error for a duplicate key");
            } catch (PSQLException e) {
                checkEq(e.getSQLState(), "23505", "SQLState");
                checkEq(e.getServerErrorMessage().getConstraint(), T + "_name_key", "getConstraint()");
                checkEq(e.getServerErrorMessage().getTable(), T, "getTable()");
            }
        });

        step("PreparedStatement past prepareThreshold (5), 10 runs, rollback, 10 more", () -> {
            conn.setAutoCommit(false);
            try (PreparedStatement ps = conn.prepareStatement("SELECT name, day FROM " + T + " WHERE id = ?")) {
                for (int i = 0; i < 10; i++) {
                    ps.setInt(1, ids.get(0));
                    try (ResultSet rs = ps.executeQuery()) {
                        check(rs.next(), "row missing");
                        checkEq(rs.getString(1), ROWS[0][2], "name");
                    }
                }
                check(ps.unwrap(org.postgresql.PGStatement.class).isUseServerPrepare(), "not server-prepared");
                conn.rollback();
                for (int i = 0; i < 10; i++) {
                    ps.setInt(1, ids.get(1));
                    try (ResultSet rs = ps.executeQuery()) {
                        check(rs.next(), "row missing");
                        checkEq(rs.getString(1), "beta", "name");
                    }
                }
                conn.commit();
            } finally {
                conn.setAutoCommit(true);
            }
        });

        step("COPY CopyManager copyIn and copyOut", () -> {
            StringBuilder data = new StringBuilder();
            for (int i = 0; i < 5; i++) {
                data.append(100 + i).append('\t').append(1_000_000_000_000L + i).append("\tcopy").append(i)
                    .append('\t').append(i % 2 == 0).append('\t').append(i / 4.0)
                    .append("\t2021-03-0").append(i + 1).append("\t2021-03-0").append(i + 1).append(" 08:30:00")
                    .append("\t2021-03-0").append(i + 1).append(" 08:30:00+00\n");
            }
            data.append("\\N\t\\N\tcopynull\t\\N\t\\N\t\\N\t\\N\t\\N\n");
            CopyManager cm = conn.unwrap(PGConnection.class).getCopyAPI();
            checkEq(cm.copyIn("COPY " + T + " (" + COLS + ") FROM STDIN", new StringReader(data.toString())), 6L, "rows in");
            StringWriter out = new StringWriter();
            cm.copyOut("COPY " + T + " (name, n) TO STDOUT", out);
            List<String> got = new ArrayList<>();
            for (String line : out.toString().split("\n")) if (line.startsWith("copy")) got.add(line);
            Collections.sort(got);
            checkEq(got, List.of("copy0\t100", "copy1\t101", "copy2\t102", "copy3\t103", "copy4\t104", "copynull\t\\N"), "rows out");
        });

        step("REPEATABLE READ, snapshot kept, update of a changed row fails with 40001", () -> {
            try (Connection a = connect(); Connection b = connect()) {
                a.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
                a.setAutoCommit(false);
                String q = "SELECT n FROM " + T + " WHERE id = " + ids.get(0);
                int before;
                try (Statement s = a.createStatement(); ResultSet rs = s.executeQuery(q)) {
                    rs.next();
                    before = rs.getInt(1);
                }
                try (Statement s = b.createStatement()) {
                    s.executeUpdate("UPDATE " + T + " SET n = n + 100 WHERE id = " + ids.get(0));
                }
                try (Statement s = a.createStatement(); ResultSet rs = s.executeQuery(q)) {
                    rs.next();
                    checkEq(rs.getInt(1), before, "A's second read");
                }
                try (Statement s = a.createStatement()) {
                    s.executeUpdate("UPDATE " + T + " SET n = 0 WHERE id = " + ids.get(0));
                    throw new AssertionError("A's update of a row B changed succeeded");
                } catch (PSQLException e) {
                    checkEq(e.getSQLState(), "40001", "SQLState");
                }
                a.rollback();
                try (Statement s = a.createStatement(); ResultSet rs = s.executeQuery(q)) {
                    rs.next();
                    checkEq(rs.getInt(1), before + 100, "A's read in a new transaction");
                }
                a.commit();
            }
        });

        if (conn != null) conn.close();
        System.out.println("pgjdbc: " + passed + " passed, " + failed + " failed");
        System.exit(failed == 0 ? 0 : 1);
    }
}
