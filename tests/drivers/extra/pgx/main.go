// pgx (v4, Debian's golang-github-jackc-pgx-v4-dev) with its defaults: every
// query prepared and cached, against the server named by PGHOST/PGPORT/
// PGUSER/PGDATABASE. Checked by hand, not in CI; see ../../README.md.
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgconn"
	"github.com/jackc/pgx/v4"
)

const T = "drv_pgx"
const COLS = "n, big, name, flag, score, day, at, at_tz"

var ctx = context.Background()
var conn *pgx.Conn
var ids []int32
var passed, failed int

type row struct {
	N     int32
	Big   int64
	Name  string
	Flag  bool
	Score float64
	Day   time.Time
	At    time.Time
	AtTz  time.Time
}

var plus2 = time.FixedZone("+02", 2*3600)
var rows = []row{
	{42, 9_000_000_000, "O'Hara ✓", true, 0.1 + 0.2, time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC),
		time.Date(2024, 1, 2, 3, 4, 5, 678_000_000, time.UTC), time.Date(2024, 1, 2, 3, 4, 5, 678_000_000, plus2)},
	{-7, -1, "beta", false, -1.5e300, time.Date(1999, 12, 31, 0, 0, 0, 0, time.UTC),
		time.Date(1999, 12, 31, 23, 59, 59, 0, time.UTC), time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)},
}

func step(title string, body func() error) {
	err := func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		return body()
	}()
	if err == nil {
		passed++
		fmt.Println("PASS " + title)
		return
	}
	failed++
	var pgErr *pgconn.PgError
	code := ""
	if errors.As(err, &pgErr) {
		code = " [" + pgErr.Code + "]"
	}
	fmt.Printf("FAIL %s: %T%s: %s\n", title, err, code, strings.Split(err.Error(), "\n")[0])
}

func check(cond bool, format string, args ...any) error {
	if !cond {
		return fmt.Errorf(format, args...)
	}
	return nil
}

func sameRow(got, want row) bool {
	return got.N == want.N && got.Big == want.Big && got.Name == want.Name && got.Flag == want.Flag &&
		got.Score == want.Score && got.Day.Equal(want.Day) && got.At.Equal(want.At) && got.AtTz.Equal(want.AtTz)
}

func main() {
	fmt.Printf("== pgx (host=%s port=%s)\n", os.Getenv("PGHOST"), os.Getenv("PGPORT"))

	step("connect", func() error {
		var err error
		conn, err = pgx.Connect(ctx, "") // PG* environment variables
		if err != nil {
			return err
		}
		var one int
		if err := conn.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil {
			return err
		}
		return check(one == 1, "SELECT 1 gave %d", one)
	})
	if conn == nil {
		fmt.Printf("pgx: %d passed, %d failed\n", passed, failed)
		os.Exit(1)
	}

	step("create table (DROP IF EXISTS, SERIAL key, eight column types)", func() error {
		if _, err := conn.Exec(ctx, "DROP TABLE IF EXISTS "+T); err != nil {
			return err
		}
		_, err := conn.Exec(ctx, "CREATE TABLE "+T+` (id serial PRIMARY KEY,
			n integer, big bigint, name text UNIQUE, flag boolean,
			score double precision, day date, at timestamp, at_tz timestamptz)`)
		return err
	})

	step("insert with parameters of every type (time.Time), RETURNING id; batch", func() error {
		for _, r := range rows {
			var id int32
			err := conn.QueryRow(ctx, "INSERT INTO "+T+" ("+COLS+") VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id",
				r.N, r.Big, r.Name, r.Flag, r.Score, r.Day, r.At, r.AtTz).Scan(&id)
			if err != nil {
				return err
			}
			ids = append(ids, id)
		}
		b := &pgx.Batch{}
		for i := 1; i <= 3; i++ {
			b.Queue("INSERT INTO "+T+" (n, name, day) VALUES ($1, $2, $3)", i, fmt.Sprintf("many%d", i),
				time.Date(2020, 1, i, 0, 0, 0, 0, time.UTC))
		}
		return conn.SendBatch(ctx, b).Close()
	})

	step("select with parameters, values round-trip", func() error {
		for k, id := range ids {
			var g row
			err := conn.QueryRow(ctx, "SELECT "+COLS+" FROM "+T+" WHERE id = $1", id).
				Scan(&g.N, &g.Big, &g.Name, &g.Flag, &g.Score, &g.Day, &g.At, &g.AtTz)
			if err != nil {
				return err
			}
			if !sameRow(g, rows[k]) {
				return fmt.Errorf("row %d: got %+v, want %+v", id, g, rows[k])
			}
		}
		var count int64
		err := conn.QueryRow(ctx, "SELECT count(*) FROM "+T+" WHERE day >= $1 AND flag = $2 AND at < $3 AND at_tz > $4",
			time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), true, time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
			time.Date(2023, 12, 31, 0, 0, 0, 0, time.UTC)).Scan(&count)
		if err != nil {
			return err
		}
		return check(count == 1, "filtered count %d", count)
	})

	step("update with parameters", func() error {
		newTz := time.Date(2030, 6, 1, 12, 0, 0, 0, time.UTC)
		tag, err := conn.Exec(ctx, "UPDATE "+T+" SET score = $1, at_tz = $2, big = big + $3 WHERE name = $4", 2.5, newTz, 1, "beta")
		if err != nil {
			return err
		}
		if tag.RowsAffected() != 1 {
			return fmt.Errorf("rows affected %d", tag.RowsAffected())
		}
		var score float64
		var atTz time.Time
		var big int64
		if err := conn.QueryRow(ctx, "SELECT score, at_tz, big FROM "+T+" WHERE name = $1", "beta").Scan(&score, &atTz, &big); err != nil {
			return err
		}
		return check(score == 2.5 && atTz.Equal(newTz) && big == 0, "got %v %v %v", score, atTz, big)
	})

	step("delete with parameters", func() error {
		tag, err := conn.Exec(ctx, "DELETE FROM "+T+" WHERE name LIKE $1", "many%")
		if err != nil {
			return err
		}
		return check(tag.RowsAffected() == 3, "rows affected %d", tag.RowsAffected())
	})

	step("transaction rolled back; savepoint (nested Begin) rolled back", func() error {
		tx, err := conn.Begin(ctx)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "INSERT INTO "+T+" (name) VALUES ($1)", "gone"); err != nil {
			return err
		}
		if err := tx.Rollback(ctx); err != nil {
			return err
		}
		tx, err = conn.Begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback(ctx)
		if _, err := tx.Exec(ctx, "INSERT INTO "+T+" (name) VALUES ($1)", "kept"); err != nil {
			return err
		}
		sp, err := tx.Begin(ctx) // SAVEPOINT
		if err != nil {
			return err
		}
		if _, err := sp.Exec(ctx, "INSERT INTO "+T+" (name) VALUES ($1)", "undone"); err != nil {
			return err
		}
		if err := sp.Rollback(ctx); err != nil {
			return err
		}
		if err := tx.Commit(ctx); err != nil {
			return err
		}
		names := map[string]bool{}
		rs, err := conn.Query(ctx, "SELECT name FROM "+T)
		if err != nil {
			return err
		}
		for rs.Next() {
			var n string
			if err := rs.Scan(&n); err != nil {
				return err
			}
			names[n] = true
		}
		if rs.Err() != nil {
			return rs.Err()
		}
		return check(!names["gone"] && !names["undone"] && names["kept"], "names %v", names)
	})

	step("unique violation caught, constraint name reported", func() error {
		_, err := conn.Exec(ctx, "INSERT INTO "+T+" (name) VALUES ($1)", "beta")
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) {
			return fmt.Errorf("no PgError for a duplicate key: %v", err)
		}
		return check(pgErr.Code == "23505" && pgErr.ConstraintName == T+"_name_key" && pgErr.TableName == T,
			"code %s constraint %q table %q", pgErr.Code, pgErr.ConstraintName, pgErr.TableName)
	})

	step("cached prepared statement run 10 times in a transaction, ROLLBACK, reused", func() error {
		q := "SELECT name, day FROM " + T + " WHERE id = $1"
		tx, err := conn.Begin(ctx)
		if err != nil {
			return err
		}
		for i := 0; i < 10; i++ {
			var name string
			var day time.Time
			if err := tx.QueryRow(ctx, q, ids[0]).Scan(&name, &day); err != nil {
				return err
			}
			if name != rows[0].Name {
				return fmt.Errorf("name %q", name)
			}
		}
		if err := tx.Rollback(ctx); err != nil {
			return err
		}
		for i := 0; i < 10; i++ {
			var name string
			var day time.Time
			if err := conn.QueryRow(ctx, q, ids[1]).Scan(&name, &day); err != nil {
				return err
			}
			if name != "beta" {
				return fmt.Errorf("name %q", name)
			}
		}
		return nil
	})

	step("COPY in with CopyFrom (binary format)", func() error {
		var src [][]any
		for i := 0; i < 5; i++ {
			d := time.Date(2021, 3, i+1, 8, 30, 0, 0, time.UTC)
			src = append(src, []any{int32(100 + i), int64(1_000_000_000_000 + i), fmt.Sprintf("copy%d", i),
				i%2 == 0, float64(i) / 4, time.Date(2021, 3, i+1, 0, 0, 0, 0, time.UTC), d, d})
		}
		src = append(src, []any{nil, nil, "copynull", nil, nil, nil, nil, nil})
		n, err := conn.CopyFrom(ctx, pgx.Identifier{T}, strings.Split(COLS, ", "), pgx.CopyFromRows(src))
		if err != nil {
			return err
		}
		if n != 6 {
			return fmt.Errorf("copied %d rows", n)
		}
		var count int64
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+T+" WHERE name LIKE 'copy%'").Scan(&count); err != nil {
			return err
		}
		return check(count == 6, "%d rows copied in", count)
	})

	step("COPY out with PgConn().CopyTo", func() error {
		var out bytes.Buffer
		if _, err := conn.PgConn().CopyTo(ctx, &out, "COPY "+T+" (name, n) TO STDOUT"); err != nil {
			return err
		}
		for _, line := range strings.Split(out.String(), "\n") {
			if line == "beta\t-7" {
				return nil
			}
		}
		return fmt.Errorf("copied out %q", out.String())
	})

	step("REPEATABLE READ, snapshot kept, update of a changed row fails with 40001", func() error {
		a, err := pgx.Connect(ctx, "")
		if err != nil {
			return err
		}
		defer a.Close(ctx)
		b, err := pgx.Connect(ctx, "")
		if err != nil {
			return err
		}
		defer b.Close(ctx)
		tx, err := a.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
		if err != nil {
			return err
		}
		defer tx.Rollback(ctx)
		q := "SELECT n FROM " + T + " WHERE id = $1"
		var before, again int32
		if err := tx.QueryRow(ctx, q, ids[0]).Scan(&before); err != nil {
			return err
		}
		if _, err := b.Exec(ctx, "UPDATE "+T+" SET n = n + 100 WHERE id = $1", ids[0]); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, q, ids[0]).Scan(&again); err != nil {
			return err
		}
		if again != before {
			return fmt.Errorf("A's second read %d, want %d", again, before)
		}
		_, err = tx.Exec(ctx, "UPDATE "+T+" SET n = 0 WHERE id = $1", ids[0])
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "40001" {
			return fmt.Errorf("A's update: want 40001, got %v", err)
		}
		return nil
	})

	conn.Close(ctx)
	fmt.Printf("pgx: %d passed, %d failed\n", passed, failed)
	if failed > 0 {
		os.Exit(1)
	}
}
