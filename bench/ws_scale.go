package main

func wsScaleMain(args []string) error { return nil }
