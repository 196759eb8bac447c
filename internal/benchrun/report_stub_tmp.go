package benchrun

func WriteReport(dir string, meta Meta, rows []Row) error { return nil }
