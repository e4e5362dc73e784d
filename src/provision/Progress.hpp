#pragma once
// How a long command reports what it is doing: on a terminal, short lines with a marker per phase;
// without one (CI), plain timestamped lines that read well in a job log.
#include <string>

namespace ddl {

class Progress {
public:
    virtual ~Progress() = default;
    virtual void phase_start(const std::string& phase, const std::string& why) = 0;
    // seconds: wall time; cpu_seconds: CPU time of ddl and the programs it ran for the phase (Ansible,
    // ssh, terraform) on this machine.
    virtual void phase_done(const std::string& phase, double seconds, double cpu_seconds, bool skipped) = 0;
    virtual void phase_failed(const std::string& phase, const std::string& message) = 0;
    virtual void node(const std::string& node, const std::string& message) = 0;
    virtual void note(const std::string& message) = 0;
};

class ConsoleProgress : public Progress {
public:
    ConsoleProgress(); // detects TTY and NO_COLOR
    void phase_start(const std::string& phase, const std::string& why) override;
    void phase_done(const std::string& phase, double seconds, double cpu_seconds, bool skipped) override;
    void phase_failed(const std::string& phase, const std::string& message) override;
    void node(const std::string& node, const std::string& message) override;
    void note(const std::string& message) override;

private:
    // A line on stderr (unless -q and not `always`) and in the cluster's log file.
    void line(const std::string& text, bool always = false);
    std::string paint(const std::string& text, const char* code) const;
    bool m_tty = false;
    bool m_color = false;
};

} // namespace ddl
