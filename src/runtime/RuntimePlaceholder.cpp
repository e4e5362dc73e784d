namespace ddl::runtime { int placeholder() { return 0; } }
