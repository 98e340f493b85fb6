print-%:
	@echo $($*)
