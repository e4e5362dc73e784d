#include "util/Redactor.hpp"

#include <catch2/catch.hpp>
#include <sstream>
#include <thread>
#include <vector>

using namespace ddl;

TEST_CASE("a redacting stream masks a registered secret even when it is written in pieces") {
    const std::string secret = "RTSECRET-pieces-7f3a";
    redaction::register_secret(secret);
    std::ostringstream target;
    {
        redaction::RedactingStreambuf buf(target.rdbuf());
        std::ostream out(&buf);
        out << "token=" << secret.substr(0, 5) << secret.substr(5) << " and more\n";
        out << "no newline yet: " << secret;
    } // what is pending is written when the buffer goes
    CHECK(target.str() == "token=*** and more\nno newline yet: ***");
}

TEST_CASE("a redacting stream passes whole lines on at once and the rest when flushed") {
    std::ostringstream target;
    redaction::RedactingStreambuf buf(target.rdbuf());
    std::ostream out(&buf);
    out << "one\ntwo";
    CHECK(target.str() == "one\n");
    out << "\rthree"; // a progress line ends at a carriage return
    CHECK(target.str() == "one\ntwo\r");
    out << std::flush;
    CHECK(target.str() == "one\ntwo\rthree");
}

TEST_CASE("a secret is masked in its JSON-escaped form too") {
    const std::string secret = "pa\"ss\\word-9c1e";
    redaction::register_secret(secret);
    CHECK(redaction::redact(R"({"message": "pa\"ss\\word-9c1e"})") == R"({"message": "***"})");
    CHECK(redaction::redact("raw " + secret) == "raw ***");
}

TEST_CASE("a secret inside a very long line is masked where the line is passed on in parts") {
    const std::string secret = "RTSECRET-longline-44b0";
    redaction::register_secret(secret);
    std::ostringstream target;
    {
        redaction::RedactingStreambuf buf(target.rdbuf());
        std::ostream out(&buf);
        const std::string filler(1000, 'x');
        for (int i = 0; i < 200; ++i)
            out << filler << secret.substr(0, 7) << secret.substr(7);
    }
    CHECK(target.str().find(secret) == std::string::npos);
    CHECK(target.str().size() == 200 * (1000 + 3));
}

TEST_CASE("StreamRedaction masks a stream while it lives and gives the stream its buffer back") {
    const std::string secret = "RTSECRET-stream-d00d";
    redaction::register_secret(secret);
    std::ostringstream target;
    std::ostream out(target.rdbuf());
    out.setf(std::ios::unitbuf);
    {
        redaction::StreamRedaction r(out);
        out << "a " << secret << "\n";
        CHECK(out.rdbuf() != target.rdbuf());
    }
    CHECK(out.rdbuf() == target.rdbuf());
    CHECK((out.flags() & std::ios::unitbuf) != 0);
    CHECK(target.str() == "a ***\n");
}

TEST_CASE("threads writing whole lines through one redacting stream do not mix their lines") {
    std::ostringstream target;
    redaction::RedactingStreambuf buf(target.rdbuf());
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&buf, t] {
            std::ostream out(&buf);
            for (int i = 0; i < 100; ++i)
                out << std::string("line from thread ") + std::to_string(t) + "\n";
        });
    for (auto& th : threads)
        th.join();
    std::istringstream lines(target.str());
    int count = 0;
    for (std::string l; std::getline(lines, l); ++count)
        CHECK(l.rfind("line from thread ", 0) == 0);
    CHECK(count == 400);
}

TEST_CASE("write_unredacted hands a secret over on purpose, after what the stream held, and masks nothing "
          "else") {
    const std::string secret = "RTSECRET-on-purpose-31a9";
    redaction::register_secret(secret);
    std::ostringstream target;
    std::ostream out(target.rdbuf());
    {
        redaction::StreamRedaction r(out);
        out << "before " << secret << " ";
        redaction::write_unredacted(out, "url?token=" + secret + "\n");
        out << "after " << secret << "\n";
    }
    CHECK(target.str() == "before *** url?token=" + secret + "\nafter ***\n");
}
