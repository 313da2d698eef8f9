module example.com/refitwire-testee

go 1.19
