CREATE TABLE account (id int PRIMARY KEY, owner text NOT NULL, balance bigint DEFAULT 0, opened date DEFAULT '2024-01-02', created timestamptz DEFAULT now(), flags boolean DEFAULT true, score double precision, note varchar(20) DEFAULT 'new');
CREATE INDEX account_owner ON account (owner);
CREATE UNIQUE INDEX account_note ON account (note, owner);
CREATE TABLE t2 (a serial, b varchar(10) UNIQUE, c char(3), d interval DEFAULT '1 day', e int DEFAULT -1, PRIMARY KEY (a));
CREATE TABLE "Mixed Case" ("Key" int PRIMARY KEY, v text[]);
CREATE SEQUENCE counter START 5 INCREMENT 2;
CREATE TABLE ledger (id bigserial PRIMARY KEY, amount int NOT NULL, at timestamp DEFAULT CURRENT_TIMESTAMP);
